import type { Coding, Observation, Quantity } from "@medplum/fhirtypes";
import type { VitalsEntry } from "../../readmodels/modules/vitals/index.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { compact, fhirCode, fhirDateTime, loinc, mapped, patientRef, type Mapped, type OutboundInput } from "./lib.js";
import { OBSERVATION_CATEGORY } from "./labs.js";

interface VitalCode {
  codings: Coding[];
  text: string;
  /** UCUM */
  unit: string;
}

/** The state's measurement names → LOINC (as the FHIR vital-signs profiles name them) and UCUM units. */
export const VITAL_CODES: Record<string, VitalCode> = {
  systolic_bp_mmhg: { codings: [loinc("8480-6", "Systolic blood pressure")], text: "Systolic blood pressure", unit: "mm[Hg]" },
  diastolic_bp_mmhg: { codings: [loinc("8462-4", "Diastolic blood pressure")], text: "Diastolic blood pressure", unit: "mm[Hg]" },
  heart_rate_bpm: { codings: [loinc("8867-4", "Heart rate")], text: "Heart rate", unit: "/min" },
  spo2_percent: { codings: [loinc("2708-6", "Oxygen saturation in Arterial blood"), loinc("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry")], text: "Oxygen saturation", unit: "%" },
  weight_kg: { codings: [loinc("29463-7", "Body weight")], text: "Body weight", unit: "kg" },
  temperature_celsius: { codings: [loinc("8310-5", "Body temperature")], text: "Body temperature", unit: "Cel" },
  respiratory_rate_bpm: { codings: [loinc("9279-1", "Respiratory rate")], text: "Respiratory rate", unit: "/min" },
  body_fat_percent: { codings: [loinc("41982-0", "Percentage of body fat Measured")], text: "Body fat", unit: "%" },
  bmi: { codings: [loinc("39156-5", "Body mass index (BMI) [Ratio]")], text: "Body mass index", unit: "kg/m2" },
};
export const BP_PANEL = loinc("85354-9", "Blood pressure panel with all children optional");
/** The position measured in (sitting, standing, supine): FHIR's core extension for it. */
export const BODY_POSITION = "http://hl7.org/fhir/StructureDefinition/observation-bodyPosition";

const quantity = (value: number, unit: string): Quantity => ({ value, unit, system: SYSTEMS.ucum, code: unit });

/** Corrected when the entry replaced a different value of one of `names` measured at the same instant (see the vitals module), else final. */
const statusOf = (e: VitalsEntry, names: readonly string[]): Observation["status"] =>
  names.some((k) => e.replaced[k] !== undefined && e.replaced[k].value !== e.measurements[k]) ? "corrected" : "final";

function observation(patientId: string, e: VitalsEntry, key: string, names: readonly string[], body: Pick<Observation, "code" | "valueQuantity" | "component">): Mapped<Observation> {
  const position = typeof e.context?.position === "string" ? e.context.position : undefined;
  const resource = compact<Omit<Observation, "id">>({
    resourceType: "Observation",
    extension: position ? [{ url: BODY_POSITION, valueCodeableConcept: { text: position } }] : undefined,
    status: statusOf(e, names),
    category: [fhirCode(OBSERVATION_CATEGORY, "vital-signs", "Vital Signs")],
    code: body.code,
    subject: patientRef(patientId),
    effectiveDateTime: fhirDateTime(e.timestamp),
    valueQuantity: body.valueQuantity,
    device: e.device_provider ? { display: e.device_provider } : undefined,
    component: body.component,
  });
  return mapped<Observation>(patientId, ["vitals", e.log_id, key], resource, [e.log_id], e.timestamp);
}

/**
 * One measurement event's Observations: blood pressure as one panel (85354-9) with its
 * systolic and diastolic components, every other measurement on its own.
 */
export function vitalObservations(patientId: string, e: VitalsEntry): Mapped<Observation>[] {
  const out: Mapped<Observation>[] = [];
  const m = e.measurements;
  const bp = (["systolic_bp_mmhg", "diastolic_bp_mmhg"] as const).filter((k) => m[k] !== undefined);
  if (bp.length > 0) {
    out.push(observation(patientId, e, "blood_pressure", bp, {
      code: { coding: [BP_PANEL], text: "Blood pressure" },
      component: bp.map((k) => ({ code: { coding: VITAL_CODES[k]!.codings, text: VITAL_CODES[k]!.text }, valueQuantity: quantity(m[k]!, VITAL_CODES[k]!.unit) })),
    }));
  }
  for (const [name, value] of Object.entries(m)) {
    const c = VITAL_CODES[name];
    if (!c || name === "systolic_bp_mmhg" || name === "diastolic_bp_mmhg") continue;
    out.push(observation(patientId, e, name, [name], { code: { coding: c.codings, text: c.text }, valueQuantity: quantity(value, c.unit) }));
  }
  return out;
}

/** Every measurement event the state keeps (the last 100), oldest first. */
export function vitalSignObservations({ state, patient }: OutboundInput): Mapped<Observation>[] {
  return (moduleEntry(state, "vitals")?.payload.history ?? []).flatMap((e) => vitalObservations(patient.id, e));
}
