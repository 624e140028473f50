import type { Condition } from "@medplum/fhirtypes";
import { codesIn, codingIn, conceptText, dateOf, dateOrInstant, instantOf, SYSTEMS } from "../lib/datatypes.js";
import { ASSERTED_DATE, EXTENSION_KEYS } from "../lib/extensions.js";
import { versionTime } from "../lib/versions.js";
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
 * The log's time (versionTime says why a change of status is dated when it happened): an
 * ended condition at its abatement, else its version's meta.lastUpdated; a recurrence or
 * relapse at its lastUpdated; an active one at recordedDate, else onset.
 */
function assertedAt(c: Condition, clinical: string | undefined): string | undefined {
  const change = clinical && ENDED.has(clinical) ? "ended" : clinical && RETURNED.has(clinical) ? "returned" : "holds";
  return versionTime(change, {
    since: [c.recordedDate, c.onsetDateTime ?? c.onsetPeriod?.start],
    ended: c.abatementDateTime ?? c.abatementPeriod?.start,
    lastUpdated: c.meta?.lastUpdated,
  });
}

/** The system of the first ICD-10 or ICD-10-CM coding of `code`. */
const codingOf = (cc: Condition["code"], code: string): string | undefined =>
  cc?.coding?.find((x) => x.code === code && (x.system === SYSTEMS.icd10 || x.system === SYSTEMS.icd10cm))?.system;

/** Condition → condition: named by SNOMED CT, ICD-10 or its text; entered-in-error is the correction. */
export const mapCondition: Mapper<Condition> = (c) => {
  const snomed = codingIn(c.code, SYSTEMS.snomed)?.code;
  const icd10 = codesIn(c.code, SYSTEMS.icd10, SYSTEMS.icd10cm);
  const extensions: Record<string, unknown> = {};
  // icd10_codes are bare codes: each code's system rides in extensions, so ICD-10-CM leaves as ICD-10-CM.
  if (icd10.length > 0) extensions[EXTENSION_KEYS.icd10Systems] = Object.fromEntries(icd10.map((code) => [code, codingOf(c.code, code)]));
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
  // The diagnosis date is the assertedDate the source gave, never the onset (a date is not a datetime); a date alone stays in fhir_resource.
  const asserted = c.extension?.find((e) => e.url === ASSERTED_DATE)?.valueDateTime;
  if (asserted?.includes("T")) payload.diagnosis_date = instantOf(asserted);
  if (verification.code) extensions[EXTENSION_KEYS.verificationStatus] = verification.code;
  // The catalog's condition has no abatement or resolution date: it goes in extensions, which the type allows.
  const abated = dateOrInstant(c.abatementDateTime ?? c.abatementPeriod?.start);
  if (abated) extensions[EXTENSION_KEYS.abatementDate] = abated;
  if (Object.keys(extensions).length > 0) payload.extensions = extensions;
  return { ok: true, logs: [{ log_type: "condition", timestamp: assertedAt(c, clinical.code), payload }] };
};
