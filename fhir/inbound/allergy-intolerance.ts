import type { AllergyIntolerance } from "@medplum/fhirtypes";
import { codingIn, conceptText, dateOf, instantOf, SYSTEMS } from "../lib/datatypes.js";
import { EXTENSION_KEYS, keptCodings, type KeptCoding } from "../lib/extensions.js";
import { ALLERGY_CLINICAL, ALLERGY_CRITICALITY, ALLERGY_VERIFICATION, checkCode, checkConcept } from "../lib/statuses.js";
import { unmappable, type Mapper } from "../types.js";

/** FHIR allergy-intolerance-criticality → the catalog's criticality. */
const CRITICALITY: Record<string, string> = { high: "high", low: "low", "unable-to-assess": "unable_to_assess" };

/** FHIR allergyintolerance-clinical → the catalog's clinical_status (the same three codes). */
const CLINICAL_STATUS: Record<string, string> = { active: "active", inactive: "inactive", resolved: "resolved" };

/** FHIR allergy-intolerance-category → the catalog's category (the catalog adds only "other"). */
const CATEGORY: Record<string, string> = { food: "food", medication: "medication", environment: "environment", biologic: "biologic" };

/**
 * Verification statuses that say the patient does not have this allergy: entered-in-error
 * (a mistake) and refuted (disproven, e.g. by challenge testing). The catalog has no such
 * status, and an allergy list that kept either would warn against a safe drug, so both
 * remove the entry.
 */
const WITHDRAWN = new Set(["entered-in-error", "refuted"]);

/**
 * What the catalog's allergy entry has no field for, in its extensions: the allergen's
 * codings (the entry keeps a SNOMED CT code alone; a drug allergen is coded in RxNorm),
 * each reaction's manifestation codings by its name, recordedDate when it has a time
 * (recorded_date is a date), and its type (allergy or intolerance).
 */
function extensionsOf(a: AllergyIntolerance, reactions: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const allergen = keptCodings(a.code);
  if (allergen.length > 0) out[EXTENSION_KEYS.allergenCodings] = allergen;
  const byName: Record<string, KeptCoding[]> = {};
  for (const m of (a.reaction ?? []).flatMap((r) => r.manifestation)) {
    const name = conceptText(m);
    const codings = keptCodings(m);
    if (name && reactions.includes(name) && codings.length > 0 && !byName[name]) byName[name] = codings;
  }
  if (Object.keys(byName).length > 0) out[EXTENSION_KEYS.reactionCodings] = byName;
  if (a.recordedDate?.includes("T")) out[EXTENSION_KEYS.recordedDateTime] = instantOf(a.recordedDate);
  if (a.type) out[EXTENSION_KEYS.allergyType] = a.type;
  return out;
}

/**
 * AllergyIntolerance → allergy_intolerance, one allergy named by its SNOMED CT code and
 * text, its other codings in extensions. Reaction severity has no place in the entry; it
 * stays in the log's fhir_resource.
 */
export const mapAllergyIntolerance: Mapper<AllergyIntolerance> = (a) => {
  const allergen = conceptText(a.code);
  if (!allergen) return unmappable(["code"], "is required: a coding or text naming the substance (the catalog keys an allergy by its SNOMED CT code or name)");
  const criticality = checkCode(a.criticality, ALLERGY_CRITICALITY, ["criticality"]);
  const clinical = checkConcept(a.clinicalStatus, ALLERGY_CLINICAL, ["clinicalStatus"]);
  const verification = checkConcept(a.verificationStatus, ALLERGY_VERIFICATION, ["verificationStatus"]);
  const wrong = [criticality, clinical, verification].flatMap((s) => (s.ok ? [] : [s.issue]));
  if (wrong.length > 0) return { ok: false, issues: wrong };
  const entry: Record<string, unknown> = { allergen };
  const snomed = codingIn(a.code, SYSTEMS.snomed)?.code;
  if (snomed) entry.snomed_code = snomed;
  const category = a.category?.map((c) => CATEGORY[c]).find(Boolean);
  if (category) entry.category = category;
  if (criticality.ok && criticality.code) entry.criticality = CRITICALITY[criticality.code];
  if (clinical.ok && clinical.code) entry.clinical_status = CLINICAL_STATUS[clinical.code];
  const reactions = [...new Set((a.reaction ?? []).flatMap((r) => r.manifestation.map(conceptText)).filter((m): m is string => Boolean(m)))];
  if (reactions.length > 0) entry.reactions = reactions;
  const recorded = dateOf(a.recordedDate);
  if (recorded) entry.recorded_date = recorded;
  if (verification.ok && verification.code && WITHDRAWN.has(verification.code)) entry.action = "remove";
  const extensions = extensionsOf(a, reactions);
  if (verification.ok && verification.code) extensions[EXTENSION_KEYS.verificationStatus] = verification.code;
  if (Object.keys(extensions).length > 0) entry.extensions = extensions;
  const timestamp = instantOf(a.recordedDate) ?? instantOf(a.onsetDateTime);
  return { ok: true, logs: [{ log_type: "allergy_intolerance", ...(timestamp ? { timestamp } : {}), payload: { allergies: [entry] } }] };
};
