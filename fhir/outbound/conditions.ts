import type { Condition } from "@medplum/fhirtypes";
import type { Condition as StateCondition } from "../../readmodels/modules/condition_diagnosis/index.js";
import { normName } from "../../readmodels/lib/payload.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { ASSERTED_DATE, EXTENSION_KEYS, stringMap } from "../lib/extensions.js";
import { CONDITION_VERIFICATION } from "../lib/statuses.js";
import { compact, concept, fhirCode, fhirDateTime, mapped, patientRef, verificationOf, type Mapped, type OutboundInput } from "./lib.js";

const CLINICAL = "http://terminology.hl7.org/CodeSystem/condition-clinical";
const CATEGORY = "http://terminology.hl7.org/CodeSystem/condition-category";

/** The state's statuses are FHIR's condition-clinical codes (entered_in_error is left out of the summary). */
const STATUS: Record<string, string> = { active: "active", resolved: "resolved", remission: "remission", inactive: "inactive" };

/**
 * When an ended condition abated: the inbound mapping keeps abatementDateTime in the
 * condition's extensions (the catalog has no field for it). Only for an ended status, as
 * FHIR's con-4 asks: a recurrence leaves the old date among the extensions.
 */
function abatementOf(c: StateCondition): string | undefined {
  const at = c.status === "active" ? undefined : c.extensions[EXTENSION_KEYS.abatementDate];
  return typeof at === "string" ? fhirDateTime(at) : undefined;
}

/** A condition's identity in the state: its SNOMED CT code, else its first ICD-10 code, else its name. */
const keyOf = (c: StateCondition): string => c.snomed_code ?? c.icd10_codes?.[0] ?? normName(c.disease_type);

export function conditionResource(patientId: string, c: StateCondition): Mapped<Condition> | undefined {
  const clinical = STATUS[c.status];
  if (clinical === undefined) return undefined; // entered in error: withdrawn
  // Each ICD-10 code in the system it came in; one sent in a log without a system is WHO ICD-10.
  const icd10Systems = stringMap(c.extensions[EXTENSION_KEYS.icd10Systems]);
  const resource = compact<Omit<Condition, "id">>({
    resourceType: "Condition",
    // The diagnosis date, which Condition has no element for: the core extension for when it was first asserted.
    extension: c.diagnosis_date ? [{ url: ASSERTED_DATE, valueDateTime: fhirDateTime(c.diagnosis_date) }] : undefined,
    clinicalStatus: fhirCode(CLINICAL, clinical),
    verificationStatus: verificationOf(c.extensions, CONDITION_VERIFICATION),
    category: [fhirCode(CATEGORY, "problem-list-item", "Problem List Item")],
    code: concept([
      c.snomed_code ? { system: SYSTEMS.snomed, code: c.snomed_code } : undefined,
      ...(c.icd10_codes ?? []).map((code) => ({ system: icd10Systems[code] ?? SYSTEMS.icd10, code })),
    ], c.disease_type),
    subject: patientRef(patientId),
    onsetDateTime: fhirDateTime(c.onset_date),
    abatementDateTime: abatementOf(c),
    recordedDate: fhirDateTime(c.recorded_at),
    stage: c.stage ? [{ summary: { text: c.stage } }] : undefined,
  });
  const logIds = [...c.history.map((h) => h.log_id), ...c.sources.map((s) => s.log_id)];
  return mapped<Condition>(patientId, [keyOf(c)], resource, logIds, c.updated_at);
}

/** The patient's conditions (problem list), in the state's order. */
export function conditionResources({ state, patient }: OutboundInput): Mapped<Condition>[] {
  const list = moduleEntry(state, "condition_diagnosis")?.payload.conditions ?? [];
  return list.map((c) => conditionResource(patient.id, c)).filter((m): m is Mapped<Condition> => m !== undefined);
}
