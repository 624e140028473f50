import type { Observation, ObservationReferenceRange } from "@medplum/fhirtypes";
import { currentValues, isCorrection, rangeIn, type CurrentValue, type LabResult } from "../../readmodels/modules/lab_results/index.js";
import type { ProcedureResult } from "../../readmodels/modules/procedures/index.js";
import { normName } from "../../readmodels/lib/payload.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { compact, concept, fhirCode, fhirDateTime, loinc, mapped, patientRef, type Mapped, type OutboundInput } from "./lib.js";
import { procedureSystem } from "./procedures.js";

export const OBSERVATION_CATEGORY = "http://terminology.hl7.org/CodeSystem/observation-category";
const INTERPRETATION = "http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation";
/** The state's flags are v3 ObservationInterpretation codes as they are. */
const FLAG_NAMES: Record<string, string> = { H: "High", L: "Low", N: "Normal", HH: "Critical high", LL: "Critical low" };
const STATUSES = new Set(["final", "preliminary", "corrected", "amended", "registered", "cancelled", "unknown"]);

const statusOf = (s: string | null | undefined): Observation["status"] => (s && STATUSES.has(s) ? (s as Observation["status"]) : "final");

/** The test's range in the value's unit (a range in another unit is not this value's). */
function rangeOf(r: LabResult, unit: string | null): ObservationReferenceRange[] | undefined {
  const g = rangeIn(r, unit);
  if (!g || (g.low === null && g.high === null)) return undefined;
  const q = (value: number | null) => (value === null ? undefined : compact({ value, unit: unit ?? undefined }));
  return [compact<ObservationReferenceRange>({ low: q(g.low), high: q(g.high) })];
}

/**
 * The status of a value as it stands: its own result_status. A value that replaces a final
 * one of the same draw and says something else is a correction in FHIR's terms even when the
 * lab called it final (its value changed after being final); after a preliminary it is final.
 * A value sent without a status is final, as the catalog's results are unless they say otherwise.
 */
function valueStatus({ v, replaced }: CurrentValue): Observation["status"] {
  const own = statusOf(v.result_status);
  if (own !== "final" || !replaced || replaced.result_status === "preliminary") return own;
  return isCorrection(v, replaced) ? "corrected" : "final";
}

/**
 * One lab value as it stands as an Observation (category laboratory): the test by LOINC and
 * name, the value as a quantity in its own unit (or a string), the test's reference range in
 * that unit, the flag as interpretation, the specimen type, its own status (see valueStatus),
 * and the log it came from.
 */
export function labObservation(patientId: string, r: LabResult, current: CurrentValue): Mapped<Observation> {
  const { v } = current;
  const unit = v.unit ?? r.unit;
  const resource = compact<Omit<Observation, "id">>({
    resourceType: "Observation",
    status: valueStatus(current),
    category: [
      fhirCode(OBSERVATION_CATEGORY, "laboratory", "Laboratory"),
      ...(r.test_category ? [{ text: r.test_category }] : []),
    ],
    code: concept([r.loinc_code ? loinc(r.loinc_code) : undefined], r.test_name) ?? { text: "lab result" },
    subject: patientRef(patientId),
    effectiveDateTime: fhirDateTime(v.timestamp),
    valueQuantity: v.value_numeric !== null ? compact({ value: v.value_numeric, unit: unit ?? undefined }) : undefined,
    valueString: v.value_numeric === null && v.value_string !== null ? v.value_string : undefined,
    interpretation: v.abnormal_flag ? [fhirCode(INTERPRETATION, v.abnormal_flag, FLAG_NAMES[v.abnormal_flag])] : undefined,
    specimen: r.specimen_type ? { display: r.specimen_type } : undefined,
    referenceRange: rangeOf(r, unit),
  });
  return mapped<Observation>(patientId, ["lab", r.loinc_code ?? normName(r.test_name), v.timestamp, v.log_id], resource, [v.log_id], v.timestamp);
}

/** A pathology or procedure result (procedure_result) as an Observation, category procedure. */
export function procedureResultObservation(patientId: string, r: ProcedureResult): Mapped<Observation> | undefined {
  if (r.status === "entered_in_error") return undefined;
  const resource = compact<Omit<Observation, "id">>({
    resourceType: "Observation",
    status: statusOf(r.status),
    category: [fhirCode(OBSERVATION_CATEGORY, "procedure", "Procedure"), ...(r.result_type ? [{ text: r.result_type }] : [])],
    code: concept([
      r.loinc_code ? loinc(r.loinc_code) : undefined,
      r.procedure_code ? compact({ system: procedureSystem("cpt"), code: r.procedure_code }) : undefined,
    ], r.test_name) ?? { text: "procedure result" },
    subject: patientRef(patientId),
    effectiveDateTime: fhirDateTime(r.performed_at),
    valueQuantity: r.value_numeric !== null ? compact({ value: r.value_numeric, unit: r.unit ?? undefined }) : undefined,
    valueString: r.value_numeric === null && r.value_string !== null ? r.value_string : undefined,
    bodySite: r.specimen_site ? { text: r.specimen_site } : undefined,
    note: r.value_numeric !== null && r.value_string !== null ? [{ text: r.value_string }] : undefined,
  });
  return mapped<Observation>(patientId, ["procedure_result", r.key], resource, r.sources.map((s) => s.log_id), r.updated_at);
}

/**
 * Every lab value the state keeps (the last 50 per test) as it stands, tests in the state's
 * order, values oldest first: a value a later one of the same draw replaced is not a result any more.
 */
export function labObservations({ state, patient }: OutboundInput): Mapped<Observation>[] {
  const results = moduleEntry(state, "lab_results")?.payload.results ?? [];
  const procedureResults = moduleEntry(state, "procedures")?.payload.results ?? [];
  return [
    ...results.flatMap((r) => currentValues(r.history).map((c) => labObservation(patient.id, r, c))),
    ...procedureResults.map((r) => procedureResultObservation(patient.id, r)).filter((m): m is Mapped<Observation> => m !== undefined),
  ];
}
