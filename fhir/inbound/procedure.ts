import type { Procedure } from "@medplum/fhirtypes";
import { conceptText, dateOrInstant, instantOf, namedCode, referencedId } from "../lib/datatypes.js";
import { clinicianOf, nameOf } from "../lib/people.js";
import { unmappable, type Mapper } from "../types.js";

/**
 * FHIR event-status → the catalog's procedure status. on-hold is a procedure begun and to
 * be resumed, so in_progress; unknown has no counterpart (the catalog requires a status).
 */
const STATUS: Record<string, string> = {
  preparation: "preparation", "in-progress": "in_progress", "on-hold": "in_progress", "not-done": "not_done",
  stopped: "stopped", completed: "completed", "entered-in-error": "entered_in_error",
};

/** Procedure → procedure: named by its code's text, identified by its first CPT, SNOMED CT or ICD-10-PCS code. */
export const mapProcedure: Mapper<Procedure> = (p, ctx) => {
  const procedure_name = conceptText(p.code);
  if (!procedure_name) return unmappable(["code"], "is required: a coding or text naming the procedure");
  const status = STATUS[p.status];
  if (!status) return unmappable(["status"], `${p.status} has no counterpart in the catalog: send the procedure's status (completed, in-progress, not-done, ...)`);
  // A procedure is kept per day performed: free-text or age-relative times cannot be placed on a day.
  for (const vague of ["performedString", "performedAge", "performedRange"] as const) {
    if (p[vague] !== undefined) return unmappable([vague], "cannot be dated: send performedDateTime or performedPeriod");
  }
  const payload: Record<string, unknown> = { procedure_name, status };
  const coded = namedCode(p.code);
  if (coded) {
    payload.procedure_code = coded.code;
    payload.code_system = coded.code_system;
  }
  const performed = dateOrInstant(p.performedDateTime ?? p.performedPeriod?.start);
  if (performed) payload.performed_date = performed;
  else if (p.performedDateTime ?? p.performedPeriod?.start) {
    // R4 requires a zone with a time; without one the instant is unknown.
    const path = p.performedDateTime ? ["performedDateTime"] : ["performedPeriod", "start"];
    return unmappable(path, "needs a time zone (Z or an offset such as +01:00) after its time");
  }
  const body_site = conceptText(p.bodySite?.[0]);
  if (body_site) payload.body_site = body_site;
  const performer = clinicianOf(p.performer?.[0]?.actor, ctx, conceptText(p.performer?.[0]?.function));
  if (performer) payload.performer = performer;
  const outcome = conceptText(p.outcome);
  if (outcome) payload.outcome = outcome;
  const reason = conceptText(p.reasonCode?.[0]) ?? nameOf(p.reasonReference?.[0], ctx);
  if (reason) payload.reason = reason;
  const encounter_id = referencedId(p.encounter, "Encounter");
  if (encounter_id) payload.encounter_id = encounter_id;
  const timestamp = instantOf(p.performedDateTime ?? p.performedPeriod?.start);
  return { ok: true, logs: [{ log_type: "procedure", ...(timestamp ? { timestamp } : {}), payload }] };
};
