import type { CarePlan, CarePlanActivity, ServiceRequest } from "@medplum/fhirtypes";
import { codingIn, conceptText, dateOf, dateOrInstant, instantOf, namedCode, referencedId, resourceKey, SYSTEMS } from "../lib/datatypes.js";
import { clinicianOf, nameOf } from "../lib/people.js";
import { CARE_PLAN_ACTIVITY_STATUS, CARE_PLAN_STATUS, checkCode } from "../lib/statuses.js";
import { unmappable, type DerivedLog, type MapContext, type Mapper } from "../types.js";

/** FHIR care-plan-activity-status → the catalog's status (unknown has no counterpart). */
const ACTIVITY_STATUS: Record<string, string> = {
  "not-started": "not_started", scheduled: "scheduled", "in-progress": "in_progress", "on-hold": "on_hold",
  completed: "completed", cancelled: "cancelled", stopped: "stopped", "entered-in-error": "entered_in_error",
};

/** An activity without a status of its own (a reference to a request) takes its plan's: an active plan's activities are planned, not yet started. */
const FROM_PLAN: Record<string, string> = {
  draft: "not_started", active: "not_started", "on-hold": "on_hold", revoked: "cancelled", completed: "completed", "entered-in-error": "entered_in_error",
};

/** The kind of resource an activity is or refers to → the catalog's item_type. */
const KIND: Record<string, string> = { Appointment: "appointment", MedicationRequest: "medication", CommunicationRequest: "education" };

/** SNOMED CT categories of a ServiceRequest (the R4 example value set) → item_type. */
const SERVICE_CATEGORY: Record<string, string> = {
  "108252007": "lab", "363679005": "imaging", "409063005": "education", "409073007": "education", "387713003": "procedure", "3457005": "referral",
};

/**
 * The phase of treatment a plan's title, description or category names, most specific
 * first. A CarePlan is where an EHR records "surveillance after treatment" or "palliative
 * care", and the catalog keeps that as treatment_phase; words are read rather than codes
 * because there is no code system for treatment phases that EHRs share.
 */
const PHASES: [RegExp, string][] = [
  [/\b(palliative|hospice|end[- ]of[- ]life|comfort care)\b/i, "palliative"],
  [/\b(surveillance|survivorship|watchful waiting|active monitoring)\b/i, "surveillance"],
  [/\bremission\b/i, "remission"],
  [/\b(active treatment|chemotherapy|radiotherapy|radiation therapy|immunotherapy|chemoradiation)\b/i, "active_treatment"],
];

function itemType(a: CarePlanActivity, ctx: MapContext): string {
  const kind = a.detail?.kind ?? a.reference?.reference?.split("/")[0];
  if (kind === "ServiceRequest") {
    const request = a.reference?.reference ? (ctx.resolve(a.reference.reference) as ServiceRequest | undefined) : undefined;
    const category = request?.category?.map((c) => codingIn(c, SYSTEMS.snomed)?.code).find((c) => c && SERVICE_CATEGORY[c]);
    return category ? SERVICE_CATEGORY[category]! : "other";
  }
  return (kind && KIND[kind]) ?? "other";
}

function itemOf(plan: CarePlan, planKey: string, a: CarePlanActivity, i: number, ctx: MapContext): DerivedLog | undefined {
  const d = a.detail;
  const description = d?.description ?? conceptText(d?.code) ?? nameOf(a.reference, ctx);
  if (!description) return undefined;
  // A request the activity refers to is the item (two plans naming it share it); otherwise the activity's place in its plan.
  const ref = a.reference?.reference;
  const plan_item_id = ref && /^[A-Za-z]+\/[^/]+$/.test(ref) ? ref : `CarePlan/${planKey}/activity/${a.id ?? i}`;
  let status = (d && ACTIVITY_STATUS[d.status]) ?? FROM_PLAN[plan.status] ?? "not_started";
  // The plan withdrawn or revoked takes its activities with it (a revoked plan's done activities stay done).
  if (plan.status === "entered-in-error") status = "entered_in_error";
  else if (plan.status === "revoked" && status !== "completed") status = "cancelled";
  const payload: Record<string, unknown> = { plan_item_id, item_type: itemType(a, ctx), description, status };
  const scheduled = dateOrInstant(d?.scheduledPeriod?.start ?? d?.scheduledTiming?.event?.[0] ?? d?.scheduledTiming?.repeat?.boundsPeriod?.start);
  if (scheduled) payload.scheduled_date = scheduled;
  const ordered_by = clinicianOf(plan.author, ctx);
  if (ordered_by) payload.ordered_by = ordered_by;
  const goal_id = referencedId(d?.goal?.[0], "Goal") ?? referencedId(plan.goal?.[0], "Goal");
  if (goal_id) payload.goal_id = goal_id;
  const encounter_id = referencedId(plan.encounter, "Encounter");
  if (encounter_id) payload.encounter_id = encounter_id;
  Object.assign(payload, namedCode(d?.code));
  return { log_type: "clinical_plan_item", payload };
}

/**
 * The treatment_phase an active plan announces. Only an active plan changes the phase: a
 * draft is not yet the patient's, and a completed or revoked plan ends a phase without
 * saying which follows. changed_by is clinician (a plan is a clinician's decision);
 * previous_phase is left out, since one plan does not say what came before. A plan with
 * no start or creation date cannot give effective_date and changes no phase.
 */
function phaseOf(plan: CarePlan): DerivedLog | undefined {
  if (plan.status !== "active") return undefined;
  const words = [plan.title, plan.description, ...(plan.category ?? []).flatMap((c) => [c.text, ...(c.coding ?? []).map((x) => x.display)])].filter(Boolean).join(" | ");
  const phase = PHASES.find(([re]) => re.test(words))?.[1];
  const effective_date = dateOf(plan.period?.start ?? plan.created);
  if (!phase || !effective_date) return undefined;
  const timestamp = instantOf(plan.period?.start ?? plan.created);
  return { log_type: "treatment_phase", ...(timestamp ? { timestamp } : {}), payload: { new_phase: phase, effective_date, changed_by: "clinician" } };
}

/**
 * CarePlan → a clinical_plan_item per activity, plus a treatment_phase when the plan
 * names one (olira-compat D: "one plan → a follow-up item + a treatment-phase update").
 */
export const mapCarePlan: Mapper<CarePlan> = (plan, ctx) => {
  const planKey = resourceKey(plan);
  const planStatus = checkCode(plan.status, CARE_PLAN_STATUS, ["status"]);
  if (!planStatus.ok) return { ok: false, issues: [planStatus.issue] };
  const logs: DerivedLog[] = [];
  for (const [i, a] of (plan.activity ?? []).entries()) {
    const activityStatus = checkCode(a.detail?.status, CARE_PLAN_ACTIVITY_STATUS, ["activity", i, "detail", "status"]);
    if (!activityStatus.ok) return { ok: false, issues: [activityStatus.issue] };
    if (a.detail?.status === "unknown" && plan.status !== "entered-in-error") {
      return unmappable(["activity", i, "detail", "status"], "unknown has no counterpart in the catalog: send the activity's status (not-started, scheduled, in-progress, ...)");
    }
    const item = itemOf(plan, planKey, a, i, ctx);
    if (!item) return unmappable(["activity", i], "needs detail.description, detail.code or a reference with a display saying what is planned");
    logs.push(item);
  }
  const phase = phaseOf(plan);
  if (phase) logs.push(phase);
  return { ok: true, logs };
};
