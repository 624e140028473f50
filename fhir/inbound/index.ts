import type { Resource } from "@medplum/fhirtypes";
import { clinicalDate } from "../lib/datatypes.js";
import type { DerivedLog, MapContext, MapIssue, Mapper } from "../types.js";
import { validateFhir } from "../validate.js";
import { mapAllergyIntolerance } from "./allergy-intolerance.js";
import { mapAppointment } from "./appointment.js";
import { mapCarePlan } from "./care-plan.js";
import { mapCareTeam } from "./care-team.js";
import { mapCondition } from "./condition.js";
import { mapDocumentReference } from "./document-reference.js";
import { mapEncounter } from "./encounter.js";
import { mapFamilyMemberHistory } from "./family-member-history.js";
import { mapGoal } from "./goal.js";
import { mapImmunization } from "./immunization.js";
import { mapPatient } from "./patient.js";
import { mapProcedure } from "./procedure.js";
import { mapDiagnosticReport } from "./diagnostic-report.js";
import { mapMedicationAdministration } from "./medication-administration.js";
import { mapMedicationRequest } from "./medication-request.js";
import { mapMedicationStatement } from "./medication-statement.js";
import { mapObservation } from "./observation.js";
import { mapQuestionnaireResponse } from "./questionnaire-response.js";

/**
 * One mapper per resource type, each in its own file. A type missing here is a located
 * error naming the types that are mapped.
 */
const MAPPERS: Readonly<Record<string, Mapper<never>>> = {
  AllergyIntolerance: mapAllergyIntolerance,
  Appointment: mapAppointment,
  CarePlan: mapCarePlan,
  CareTeam: mapCareTeam,
  Condition: mapCondition,
  DocumentReference: mapDocumentReference,
  Encounter: mapEncounter,
  FamilyMemberHistory: mapFamilyMemberHistory,
  Goal: mapGoal,
  Immunization: mapImmunization,
  Patient: mapPatient,
  Procedure: mapProcedure,
  DiagnosticReport: mapDiagnosticReport,
  MedicationAdministration: mapMedicationAdministration,
  MedicationRequest: mapMedicationRequest,
  MedicationStatement: mapMedicationStatement,
  Observation: mapObservation,
  QuestionnaireResponse: mapQuestionnaireResponse,
};

export const MAPPED_TYPES: readonly string[] = Object.keys(MAPPERS).sort();

export const isMappedType = (type: string): boolean => Object.hasOwn(MAPPERS, type);

/** A derived log with what every FHIR-made log carries: where it came from. */
export interface FhirLog extends DerivedLog {
  /** `{object_type: resourceType, object_id: id}`: the resource's identity at its source. */
  trace: { object_type: string; object_id: string };
  /** The whole resource as sent (`fhir_resource`), so nothing the EHR sent is lost. */
  metadata: { fhir_resource: Resource; fhir_reference: string };
}

export type DeriveOutcome =
  | { ok: true; logs: FhirLog[] }
  | { ok: false; code: "fhir_invalid" | "fhir_unmappable"; message: string; issues: MapIssue[] };

const describe = (issues: MapIssue[]) => {
  const first = issues[0]!;
  const where = first.path.length > 0 ? `${first.path.join(".")} ` : "";
  return `${where}${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`;
};

/**
 * A resource as the logs it becomes: checked against FHIR R4 first (an invalid resource
 * is `fhir_invalid`, located), then mapped (a resource type or content the catalog has
 * no place for is `fhir_unmappable`). `reference` names the resource when it has no id
 * (a Bundle entry's fullUrl, or a digest of its content).
 */
export function deriveLogs(resource: Resource, ctx: MapContext, reference: string): DeriveOutcome {
  const type = resource.resourceType;
  if (!isMappedType(type)) {
    const message = `resourceType ${type} is not mapped to patient logs; mapped types: ${MAPPED_TYPES.join(", ")}`;
    return { ok: false, code: "fhir_unmappable", message, issues: [{ path: ["resourceType"], message }] };
  }
  const invalid = validateFhir(resource);
  if (invalid.length > 0) return { ok: false, code: "fhir_invalid", message: `${type} is not valid FHIR R4: ${describe(invalid)}`, issues: invalid };
  const mapped = (MAPPERS[type] as Mapper)(resource, ctx);
  if (!mapped.ok) return { ok: false, code: "fhir_unmappable", message: `${type} cannot be mapped: ${describe(mapped.issues)}`, issues: mapped.issues };
  if (mapped.logs.length === 0) {
    const message = `${type} holds nothing the patient's state keeps`;
    return { ok: false, code: "fhir_unmappable", message, issues: [{ path: [], message }] };
  }
  const object_id = resource.id ?? reference;
  const when = clinicalDate(resource);
  return {
    ok: true,
    logs: mapped.logs.map((l) => ({
      ...l,
      ...(l.timestamp ?? when ? { timestamp: l.timestamp ?? when } : {}),
      trace: { object_type: type, object_id },
      metadata: { fhir_resource: resource, fhir_reference: `${type}/${object_id}` },
    })),
  };
}
