import type { Condition } from "@medplum/fhirtypes";
import { codeOf, codesIn, codingIn, conceptText, dateOf, dateOrInstant, instantOf, SYSTEMS } from "../lib/datatypes.js";
import { checkConcept, CONDITION_CLINICAL, CONDITION_VERIFICATION } from "../lib/statuses.js";
import { unmappable, type Mapper } from "../types.js";

/** FHIR condition-clinical → the catalog's clinical_status (relapse and recurrence are active again). */
const CLINICAL_STATUS: Record<string, string> = {
  active: "active", recurrence: "active", relapse: "active", inactive: "inactive", remission: "remission", resolved: "resolved",
};

/** Statuses that say the condition has ended (FHIR's con-4: the only ones an abatement may come with). */
const ENDED = new Set(["inactive", "remission", "resolved"]);
/** Statuses that say it came back after it ended. */
const RETURNED = new Set(["recurrence", "relapse"]);

/**
 * The log's time. The condition module keeps, per field, the value of the latest log by
 * event time, and every version of one Condition carries the same onset and recordedDate,
 * so a change of status must be dated after them or the version accepted last wins (an
 * older active one undid a resolution). An ended condition is dated at its abatement, else
 * its version's meta.lastUpdated; a recurrence or relapse at its lastUpdated; an active one
 * stays at recordedDate, else onset, so the state as of any time since then holds it.
 */
function assertedAt(c: Condition, clinical: string | undefined): string | undefined {
  const onset = instantOf(c.onsetDateTime ?? c.onsetPeriod?.start);
  const recorded = instantOf(c.recordedDate);
  const updated = instantOf(c.meta?.lastUpdated);
  if (clinical && ENDED.has(clinical)) return instantOf(c.abatementDateTime ?? c.abatementPeriod?.start) ?? updated ?? recorded ?? onset;
  if (clinical && RETURNED.has(clinical)) return updated ?? recorded ?? onset;
  return recorded ?? onset ?? updated;
}

/** Condition → condition: named by SNOMED CT, ICD-10 or its text; entered-in-error is the correction. */
export const mapCondition: Mapper<Condition> = (c) => {
  const snomed = codingIn(c.code, SYSTEMS.snomed)?.code;
  const icd10 = codesIn(c.code, SYSTEMS.icd10, SYSTEMS.icd10cm);
  const name = conceptText(c.code);
  if (!snomed && icd10.length === 0 && !name) return unmappable(["code"], "is required: a SNOMED CT or ICD-10 coding, or text, naming the condition");
  const payload: Record<string, unknown> = {};
  if (name) payload.disease_type = name;
  if (snomed) payload.snomed_code = snomed;
  if (icd10.length > 0) payload.icd10_codes = icd10;
  const verification = checkConcept(c.verificationStatus, CONDITION_VERIFICATION, ["verificationStatus"]);
  if (!verification.ok) return { ok: false, issues: [verification.issue] };
  const clinical = checkConcept(c.clinicalStatus, CONDITION_CLINICAL, ["clinicalStatus"]);
  if (!clinical.ok) return { ok: false, issues: [clinical.issue] };
  if (verification.code === "entered-in-error") payload.clinical_status = "entered_in_error";
  else if (clinical.code) payload.clinical_status = CLINICAL_STATUS[clinical.code];
  const stage = c.stage?.map((s) => conceptText(s.summary)).find(Boolean);
  if (stage) payload.stage = stage;
  const onset = dateOf(c.onsetDateTime ?? c.onsetPeriod?.start);
  if (onset) payload.onset_date = onset;
  const recorded = instantOf(c.recordedDate);
  if (recorded) payload.recorded_at = recorded;
  if (onset && codeOf(c.category?.[0]) !== "problem-list-item") payload.diagnosis_date = instantOf(c.onsetDateTime ?? c.onsetPeriod?.start);
  // The catalog's condition has no abatement or resolution date: it goes in extensions, which the type allows.
  const abated = dateOrInstant(c.abatementDateTime ?? c.abatementPeriod?.start);
  if (abated) payload.extensions = { abatement_date: abated };
  return { ok: true, logs: [{ log_type: "condition", timestamp: assertedAt(c, clinical.code), payload }] };
};
