import type { Dosage, MedicationStatement, Quantity } from "@medplum/fhirtypes";
import type { Medication } from "../../readmodels/modules/medications/index.js";
import { normName } from "../../readmodels/lib/payload.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { clinicianRef, compact, concept, fhirDateTime, mapped, patientRef, textConcept, type Mapped, type OutboundInput } from "./lib.js";

const NDC = "http://hl7.org/fhir/sid/ndc";

/** "500 mg" (or "500" with dose_unit "mg") as a quantity; a dose that is no number with a unit stays in the dosage text only. */
export function doseQuantity(dose: string | null, unit: string | null): Quantity | undefined {
  const m = dose ? /^\s*(\d+(?:\.\d+)?)\s*(\S.*)?$/.exec(dose) : null;
  if (!m) return undefined;
  const u = m[2]?.trim() || unit || undefined;
  return compact<Quantity>({ value: Number(m[1]), unit: u });
}

function dosageOf(m: Medication): Dosage | undefined {
  const text = [m.dose, m.dose && m.dose_unit && !m.dose.includes(m.dose_unit) ? m.dose_unit : null, m.form, m.route, m.frequency]
    .filter(Boolean).join(" ");
  const times = (m.schedule_times ?? []).map((t) => (t.length === 5 ? `${t}:00` : t));
  const quantity = doseQuantity(m.dose, m.dose_unit);
  const dosage = compact<Dosage>({
    text: text || undefined,
    timing: m.frequency || times.length > 0 ? compact({ code: textConcept(m.frequency), repeat: times.length > 0 ? { timeOfDay: times } : undefined }) : undefined,
    route: textConcept(m.route),
    doseAndRate: quantity ? [{ doseQuantity: quantity }] : undefined,
  });
  return Object.keys(dosage).length > 0 ? dosage : undefined;
}

/**
 * A medication on the current list: status active (the list holds what the patient takes;
 * a deleted one is no longer there), the drug by RxNorm, NDC and name, the dosage from
 * dose, unit, form, route, frequency and schedule times. The therapeutic class is a note:
 * MedicationStatement has no element for it.
 */
export function medicationResource(patientId: string, m: Medication): Mapped<MedicationStatement> {
  const dosage = dosageOf(m);
  const resource = compact<Omit<MedicationStatement, "id">>({
    resourceType: "MedicationStatement",
    status: "active",
    medicationCodeableConcept: concept([
      m.rxnorm_cui ? { system: SYSTEMS.rxnorm, code: m.rxnorm_cui } : undefined,
      m.ndc_code ? { system: NDC, code: m.ndc_code } : undefined,
    ], m.medication_name),
    subject: patientRef(patientId),
    effectivePeriod: m.start_date ? { start: fhirDateTime(m.start_date) } : undefined,
    informationSource: clinicianRef(m.prescribed_by),
    dosage: dosage ? [dosage] : undefined,
    note: m.therapeutic_class ? [{ text: `Therapeutic class: ${m.therapeutic_class}` }] : undefined,
  });
  return mapped<MedicationStatement>(patientId, [m.rxnorm_cui ?? normName(m.medication_name)], resource, m.sources.map((s) => s.log_id), m.updated_at);
}

export function medicationResources({ state, patient }: OutboundInput): Mapped<MedicationStatement>[] {
  return (moduleEntry(state, "medications")?.payload.medications ?? []).map((m) => medicationResource(patient.id, m));
}
