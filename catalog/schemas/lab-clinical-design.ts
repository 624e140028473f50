/**
 * The six lab-and-clinical types the spec only names. Their shapes are this service's
 * design: small, FHIR-inspired (Encounter, CarePlan.activity, DocumentReference,
 * Procedure, Goal, Task), each with one identity field and a status enum, snake_case
 * like the rest of the catalog.
 */
import type { Static } from "@sinclair/typebox";
import { checkPeriod, entry, type CatalogEntry, type PayloadIssue } from "../issues.js";
import { Clinician, DateOrDateTimeStr, DateTimeStr, Enum, Num, Obj, Opt, Period, ReqStr, Str, extensible } from "./common.js";

const CodeRef = { code: Opt(Str()), code_system: Opt(Str({ description: "For example CPT, SNOMED, LOINC, ICD-10-PCS" })) };

export const CareEncounter = Obj(
  {
    encounter_id: ReqStr({ description: "Identity of the encounter; clinical_note.encounter_id points here" }),
    status: Enum(["planned", "arrived", "in_progress", "finished", "cancelled", "entered_in_error"]),
    encounter_class: Opt(Enum(["ambulatory", "emergency", "inpatient", "observation", "virtual", "home", "other"])),
    encounter_type: Opt(Str({ description: "Free text or coded visit type, for example oncology_follow_up" })),
    period: Opt(Period),
    reason: Opt(Str()),
    location: Opt(Str()),
    practitioner: Opt(Clinician),
    ...extensible,
  },
  { description: "Service design: a visit or contact with the care system (FHIR Encounter). Identity: encounter_id; a later log with the same id updates it." },
);

export const ClinicalPlanItem = Obj(
  {
    plan_item_id: ReqStr({ description: "Identity of the plan item" }),
    item_type: Enum(["medication", "procedure", "lab", "imaging", "referral", "appointment", "education", "monitoring", "other"]),
    description: ReqStr(),
    status: Enum(["not_started", "scheduled", "in_progress", "on_hold", "completed", "cancelled", "stopped", "entered_in_error"]),
    scheduled_date: Opt(DateOrDateTimeStr()),
    ordered_by: Opt(Clinician),
    goal_id: Opt(Str({ description: "The care_goal this item serves" })),
    encounter_id: Opt(Str({ description: "The care_encounter that produced it" })),
    ...CodeRef,
    ...extensible,
  },
  { description: "Service design: one planned activity of the care plan (FHIR CarePlan.activity / ServiceRequest). Identity: plan_item_id." },
);

export const UnstructuredReport = Obj(
  {
    report_id: ReqStr({ description: "Identity of the document" }),
    report_type: ReqStr({ description: "Client-defined, for example discharge_letter, pathology_report, referral_letter, scanned_document" }),
    content: ReqStr({ description: "The report text; feeds extraction of structured logs" }),
    title: Opt(Str()),
    status: Opt(Enum(["current", "superseded", "entered_in_error"], { default: "current" })),
    mime_type: Opt(Str({ description: "Media type of the original, for example text/plain, application/pdf", default: "text/plain" })),
    authored_date: Opt(DateOrDateTimeStr()),
    author: Opt(Clinician),
    encounter_id: Opt(Str()),
    ...extensible,
  },
  { description: "Service design: a free-text clinical document kept as received (FHIR DocumentReference). Identity: report_id." },
);

export const Procedure = Obj(
  {
    procedure_name: ReqStr({ description: "Identity with procedure_code: code when set, else normalized name and performed_date" }),
    procedure_code: Opt(Str({ description: "CPT, SNOMED or ICD-10-PCS code; preferred identity" })),
    code_system: Opt(Str()),
    status: Enum(["preparation", "in_progress", "completed", "not_done", "stopped", "entered_in_error"]),
    performed_date: Opt(DateOrDateTimeStr()),
    body_site: Opt(Str()),
    performer: Opt(Clinician),
    outcome: Opt(Str()),
    reason: Opt(Str()),
    encounter_id: Opt(Str()),
    ...extensible,
  },
  { description: "Service design: a procedure the patient had or has planned (FHIR Procedure); results go in procedure_result." },
);

export const CareGoal = Obj(
  {
    goal_id: ReqStr({ description: "Identity of the goal" }),
    description: ReqStr(),
    lifecycle_status: Enum(["proposed", "planned", "accepted", "active", "on_hold", "completed", "cancelled", "rejected", "entered_in_error"]),
    achievement_status: Opt(Enum(["in_progress", "improving", "worsening", "no_change", "achieved", "not_achieved"])),
    category: Opt(Str({ description: "For example symptom_control, physical_activity, nutrition, medication" })),
    target: Opt(Obj({ measure: Opt(Str()), value_numeric: Opt(Num()), unit: Opt(Str()), due_date: Opt(DateOrDateTimeStr()) })),
    start_date: Opt(DateOrDateTimeStr()),
    expressed_by: Opt(Enum(["patient", "clinician", "caregiver"])),
    ...extensible,
  },
  { description: "Service design: a goal of the patient's care (FHIR Goal). Identity: goal_id." },
);

export const CareAction = Obj(
  {
    action_id: ReqStr({ description: "Identity of the action" }),
    action_type: ReqStr({ description: "Client-defined, for example outreach_call, education_session, referral_sent, appointment_booked" }),
    status: Enum(["requested", "in_progress", "completed", "cancelled", "failed", "entered_in_error"]),
    description: Opt(Str()),
    performed_by: Opt(Clinician),
    performed_at: Opt(DateTimeStr()),
    goal_id: Opt(Str({ description: "The care_goal it serves" })),
    plan_item_id: Opt(Str({ description: "The clinical_plan_item it carries out" })),
    outcome: Opt(Str()),
    ...extensible,
  },
  { description: "Service design: a task done for the patient by the care team or an agent (FHIR Task). Identity: action_id." },
);

export function refineCareEncounter(p: Static<typeof CareEncounter>): PayloadIssue[] {
  return checkPeriod(p.period, ["period"]);
}

export const designedLabClinicalEntries = {
  care_encounter: entry(CareEncounter, refineCareEncounter),
  clinical_plan_item: entry(ClinicalPlanItem),
  unstructured_report: entry(UnstructuredReport),
  procedure: entry(Procedure),
  care_goal: entry(CareGoal),
  care_action: entry(CareAction),
} satisfies Record<string, CatalogEntry>;
