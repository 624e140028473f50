import type { Observation, Quantity } from "@medplum/fhirtypes";
import { codesIn, codingIn, effectiveOf, referenceText, referenceType, SYSTEMS } from "../lib/datatypes.js";
import { unmappable, type DerivedLog, type MapOutcome } from "../types.js";
import { PUT_RIGHT, resultStatus } from "./lab.js";
import { VITAL_PANELS, VITAL_SIGNS, type VitalCode } from "./loinc.js";

type Path = (string | number)[];

/** The body-position extension's SNOMED CT codes → vitals_measurement's context.position. */
const POSITION: Readonly<Record<string, "sitting" | "standing" | "supine">> = {
  "33586001": "sitting", "10904000": "standing", "40199007": "supine",
};
const BODY_POSITION = "http://hl7.org/fhir/StructureDefinition/observation-bodyPosition";

/** Who measured, by the performer's resource type: the catalog's source types. */
const SOURCE_TYPE: Readonly<Record<string, string>> = {
  Patient: "patient", RelatedPerson: "caregiver", Practitioner: "clinician", PractitionerRole: "clinician", Organization: "ehr", CareTeam: "clinician",
};

const round2 = (v: number) => Math.round(v * 100) / 100;

/** The vital sign a coded value is, when its LOINC code is in the table. */
export const vitalOf = (cc: Observation["code"] | undefined): [string, VitalCode] | undefined => {
  const code = codesIn(cc, SYSTEMS.loinc).find((c) => VITAL_SIGNS[c]);
  return code ? [code, VITAL_SIGNS[code]!] : undefined;
};

/** Whether the observation is a vital sign the table knows: by its code, or a panel whose components are. */
export const isVitalSign = (o: Observation): boolean =>
  vitalOf(o.code) !== undefined || codesIn(o.code, SYSTEMS.loinc).some((c) => VITAL_PANELS[c]) || (o.component ?? []).some((c) => vitalOf(c.code));

/** A quantity in the catalog's unit for the vital, or the located reason it is not one. */
function converted(vital: VitalCode, q: Quantity, path: Path): number | { path: Path; message: string } {
  const convert = (q.code !== undefined ? vital.units[q.code] : undefined) ?? (q.unit !== undefined ? vital.units[q.unit] : undefined);
  if (q.value === undefined) return { path: [...path, "value"], message: `is required: the ${vital.name} needs a number` };
  if (!convert) {
    const sent = q.code ?? q.unit;
    return { path: [...path, q.code !== undefined ? "code" : "unit"], message: `${sent ?? "no unit"} is not a unit of ${vital.name} the service reads: send one of ${Object.keys(vital.units).join(", ")}` };
  }
  return round2(convert(q.value));
}

function sourceOf(o: Observation): Record<string, string> {
  if (o.device) {
    const name = referenceText(o.device);
    return { type: "device", ...(name ? { name } : {}) };
  }
  const by = o.performer?.[0];
  const name = by?.display;
  return { type: SOURCE_TYPE[referenceType(by) ?? ""] ?? "ehr", ...(name ? { name } : {}) };
}

function positionOf(o: Observation): "sitting" | "standing" | "supine" | null {
  const ext = o.extension?.find((e) => e.url === BODY_POSITION);
  const code = codingIn(ext?.valueCodeableConcept, SYSTEMS.snomed)?.code;
  return code === undefined ? null : (POSITION[code] ?? null);
}

/**
 * A vital-sign Observation (its own value, or a panel's components such as blood pressure's
 * 8480-6 and 8462-4) → vitals_measurement for the keys it has, and clinical_measurement for
 * height, BMI and head circumference, which the vitals have no key for.
 */
export function mapVitalSigns(o: Observation): MapOutcome {
  const status = resultStatus(o, [], PUT_RIGHT.vital);
  if ("issue" in status) return { ok: false, issues: [status.issue] };
  const found: { vital: VitalCode; code: string; q: Quantity; path: Path }[] = [];
  const own = vitalOf(o.code);
  if (own && o.valueQuantity) found.push({ vital: own[1], code: own[0], q: o.valueQuantity, path: ["valueQuantity"] });
  (o.component ?? []).forEach((c, i) => {
    const v = vitalOf(c.code);
    if (v && c.valueQuantity) found.push({ vital: v[1], code: v[0], q: c.valueQuantity, path: ["component", i, "valueQuantity"] });
  });
  if (found.length === 0) {
    return unmappable(own ? ["valueQuantity"] : ["component"], "holds no vital-sign value: send the measurement as a valueQuantity (or, for a panel, in components coded by LOINC)");
  }
  const measurements: Record<string, number> = {};
  const visit: Record<string, unknown>[] = [];
  const measured_at = effectiveOf(o);
  for (const f of found) {
    const value = converted(f.vital, f.q, f.path);
    if (typeof value !== "number") return { ok: false, issues: [value] };
    const home = f.vital.home;
    if (home.log_type === "vitals_measurement") measurements[home.key] = value;
    else visit.push({ measurement_type: home.measurement_type, value_numeric: value, unit: home.unit, code_system: "LOINC", code: f.code, ...(measured_at ? { measured_at } : {}) });
  }
  if (measurements.spo2_percent !== undefined && measurements.spo2_percent > 100) {
    return unmappable(found.find((f) => f.vital.home.log_type === "vitals_measurement" && f.vital.home.key === "spo2_percent")!.path, "is above 100 %");
  }
  const logs: DerivedLog[] = [];
  const source = sourceOf(o);
  if (Object.keys(measurements).length > 0) {
    logs.push({
      log_type: "vitals_measurement",
      payload: { measurements, context: { position: positionOf(o), fasting: null }, source, collection_datetime: measured_at ?? null },
    });
  }
  if (visit.length > 0) logs.push({ log_type: "clinical_measurement", payload: { measurements: visit, source } });
  return { ok: true, logs };
}
