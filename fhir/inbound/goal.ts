import type { Goal, Reference } from "@medplum/fhirtypes";
import { codeOf, conceptText, dateOrInstant, instantOf, resourceKey } from "../lib/datatypes.js";
import { unmappable, type Mapper } from "../types.js";

/** FHIR goal-status → the catalog's lifecycle_status (the same codes, snake_case). */
const LIFECYCLE: Record<string, string> = {
  proposed: "proposed", planned: "planned", accepted: "accepted", active: "active", "on-hold": "on_hold",
  completed: "completed", cancelled: "cancelled", "entered-in-error": "entered_in_error", rejected: "rejected",
};

/**
 * FHIR goal-achievement → the catalog's achievement_status. sustaining is a goal met and
 * kept (achieved); no-progress is no_change; not-attainable is not_achieved.
 */
const ACHIEVEMENT: Record<string, string> = {
  "in-progress": "in_progress", improving: "improving", worsening: "worsening", "no-change": "no_change", achieved: "achieved",
  sustaining: "achieved", "not-achieved": "not_achieved", "no-progress": "no_change", "not-attainable": "not_achieved",
};

/** Who expressed the goal, by the type of resource the reference names. */
function expressedBy(r: Reference | undefined): string | undefined {
  const type = r?.reference?.split("/")[0];
  if (type === "Patient") return "patient";
  if (type === "Practitioner" || type === "PractitionerRole") return "clinician";
  return type === "RelatedPerson" ? "caregiver" : undefined;
}

/**
 * Goal → care_goal, identified by the goal's id. A target range (160 to 180 lb) has no
 * place in the catalog's single target value, so it goes under extensions.target_range.
 */
export const mapGoal: Mapper<Goal> = (g) => {
  const goal_id = resourceKey(g);
  const description = conceptText(g.description);
  if (!description) return unmappable(["description"], "needs text or a coding with a display saying what the goal is");
  const lifecycle_status = LIFECYCLE[g.lifecycleStatus];
  if (!lifecycle_status) return unmappable(["lifecycleStatus"], `${g.lifecycleStatus} is not a goal status of R4 (proposed, planned, accepted, active, on-hold, completed, ...)`);
  const payload: Record<string, unknown> = { goal_id, description, lifecycle_status };
  const achievement = ACHIEVEMENT[codeOf(g.achievementStatus) ?? ""];
  if (achievement) payload.achievement_status = achievement;
  const category = conceptText(g.category?.[0]);
  if (category) payload.category = category;
  const t = g.target?.[0];
  const target: Record<string, unknown> = {};
  const measure = conceptText(t?.measure);
  if (measure) target.measure = measure;
  if (t?.detailQuantity?.value !== undefined) target.value_numeric = t.detailQuantity.value;
  const unit = t?.detailQuantity?.unit ?? t?.detailRange?.low?.unit ?? t?.detailRange?.high?.unit;
  if (unit) target.unit = unit;
  const due = dateOrInstant(t?.dueDate);
  if (due) target.due_date = due;
  if (Object.keys(target).length > 0) payload.target = target;
  if (t?.detailRange) payload.extensions = { target_range: { low: t.detailRange.low?.value ?? null, high: t.detailRange.high?.value ?? null } };
  const start = dateOrInstant(g.startDate);
  if (start) payload.start_date = start;
  const by = expressedBy(g.expressedBy);
  if (by) payload.expressed_by = by;
  // The goal is replaced by its latest log: the date its status was set orders versions.
  const timestamp = instantOf(g.statusDate) ?? instantOf(g.startDate);
  return { ok: true, logs: [{ log_type: "care_goal", ...(timestamp ? { timestamp } : {}), payload }] };
};
