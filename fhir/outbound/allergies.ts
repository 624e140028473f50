import type { AllergyIntolerance } from "@medplum/fhirtypes";
import type { Allergy } from "../../readmodels/modules/allergies/index.js";
import { normName } from "../../readmodels/lib/payload.js";
import { moduleEntry } from "../../readmodels/patient-state.js";
import { SYSTEMS } from "../lib/datatypes.js";
import { compact, concept, fhirCode, fhirDateTime, mapped, patientRef, type Mapped, type OutboundInput } from "./lib.js";

const CLINICAL = "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical";
const CATEGORIES = new Set(["food", "medication", "environment", "biologic"]);
const CRITICALITY: Record<string, AllergyIntolerance["criticality"]> = { high: "high", low: "low", unable_to_assess: "unable-to-assess" };
const STATUSES = new Set(["active", "inactive", "resolved"]);

/**
 * One allergy or intolerance: the allergen by SNOMED CT and name; its reactions as the
 * manifestations of one reaction (the state keeps them as a list of names). Category
 * "other" has no FHIR code and is left out.
 */
export function allergyResource(patientId: string, a: Allergy): Mapped<AllergyIntolerance> {
  const resource = compact<Omit<AllergyIntolerance, "id">>({
    resourceType: "AllergyIntolerance",
    clinicalStatus: fhirCode(CLINICAL, STATUSES.has(a.status) ? a.status : "active"),
    category: a.category && CATEGORIES.has(a.category) ? [a.category as "food"] : undefined,
    criticality: a.criticality ? CRITICALITY[a.criticality] : undefined,
    code: concept([a.snomed_code ? { system: SYSTEMS.snomed, code: a.snomed_code } : undefined], a.allergen),
    patient: patientRef(patientId),
    recordedDate: fhirDateTime(a.recorded_date),
    reaction: a.reactions && a.reactions.length > 0 ? [{ manifestation: a.reactions.map((text) => ({ text })) }] : undefined,
  });
  const logIds = [...a.history.map((h) => h.log_id), ...a.sources.map((s) => s.log_id)];
  return mapped<AllergyIntolerance>(patientId, [a.snomed_code ?? normName(a.allergen)], resource, logIds, a.updated_at);
}

export function allergyResources({ state, patient }: OutboundInput): Mapped<AllergyIntolerance>[] {
  return (moduleEntry(state, "allergies")?.payload.allergies ?? []).map((a) => allergyResource(patient.id, a));
}
