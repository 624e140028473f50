import type { AllergyIntolerance, Coding } from "@medplum/fhirtypes";
import type { Allergy } from "../../readmodels/modules/allergies/index.js";
import { normName } from "../../readmodels/lib/payload.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { codingsAt, EXTENSION_KEYS, objectAt } from "../lib/extensions.js";
import { ALLERGY_VERIFICATION } from "../lib/statuses.js";
import { compact, concept, fhirCode, fhirDateTime, mapped, patientRef, verificationOf, type Mapped, type OutboundInput } from "./lib.js";

const CLINICAL = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical";
const CATEGORIES = new Set(["food", "medication", "environment", "biologic"]);
const CRITICALITY: Record<string, AllergyIntolerance["criticality"]> = { high: "high", low: "low", unable_to_assess: "unable-to-assess" };
const STATUSES = new Set(["active", "inactive", "resolved"]);
const TYPES = new Set(["allergy", "intolerance"]);

/** The allergen's codings: those it came with (FHIR in keeps them in extensions), and its SNOMED CT code if they lack it. */
function allergenCodings(a: Allergy): Coding[] {
  const sent = codingsAt(a.extensions[EXTENSION_KEYS.allergenCodings]);
  const snomed = a.snomed_code && !sent.some((c) => c.system === SYSTEMS.snomed && c.code === a.snomed_code);
  return snomed ? [{ system: SYSTEMS.snomed, code: a.snomed_code! }, ...sent] : sent;
}

/** recordedDate with the time it came with, while the state's recorded_date is still that day; else the date. */
function recordedOf(a: Allergy): string | undefined {
  const at = a.extensions[EXTENSION_KEYS.recordedDateTime];
  return typeof at === "string" && a.recorded_date !== null && at.startsWith(a.recorded_date) ? fhirDateTime(at) : fhirDateTime(a.recorded_date);
}

/**
 * One allergy or intolerance: the allergen by its codings and name; its reactions as the
 * manifestations of one reaction (the state keeps them as a list of names), each with the
 * codings it came with. Category "other" has no FHIR code and is left out.
 */
export function allergyResource(patientId: string, a: Allergy): Mapped<AllergyIntolerance> {
  const reactionCodings = objectAt(a.extensions[EXTENSION_KEYS.reactionCodings]);
  const resource = compact<Omit<AllergyIntolerance, "id">>({
    resourceType: "AllergyIntolerance",
    clinicalStatus: fhirCode(CLINICAL, STATUSES.has(a.status) ? a.status : "active"),
    verificationStatus: verificationOf(a.extensions, ALLERGY_VERIFICATION),
    type: TYPES.has(String(a.extensions[EXTENSION_KEYS.allergyType])) ? (a.extensions[EXTENSION_KEYS.allergyType] as AllergyIntolerance["type"]) : undefined,
    category: a.category && CATEGORIES.has(a.category) ? [a.category as "food"] : undefined,
    criticality: a.criticality ? CRITICALITY[a.criticality] : undefined,
    code: concept(allergenCodings(a), a.allergen),
    patient: patientRef(patientId),
    recordedDate: recordedOf(a),
    reaction: a.reactions && a.reactions.length > 0 ? [{ manifestation: a.reactions.map((text) => concept(codingsAt(reactionCodings[text]), text)!) }] : undefined,
  });
  const logIds = [...a.history.map((h) => h.log_id), ...a.sources.map((s) => s.log_id)];
  return mapped<AllergyIntolerance>(patientId, [a.snomed_code ?? normName(a.allergen)], resource, logIds, a.updated_at);
}

export function allergyResources({ state, patient }: OutboundInput): Mapped<AllergyIntolerance>[] {
  return (moduleEntry(state, "allergies")?.payload.allergies ?? []).map((a) => allergyResource(patient.id, a));
}
