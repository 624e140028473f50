import type { Encounter } from "@medplum/fhirtypes";
import { codeOf, conceptText, instantOf, resourceKey } from "../lib/datatypes.js";
import { clinicianOf, nameOf } from "../lib/people.js";
import { unmappable, type Mapper } from "../types.js";

/**
 * FHIR encounter-status → the catalog's status. triaged is a patient arrived and assessed
 * (arrived); onleave is an encounter still open (in_progress); unknown has no counterpart.
 */
const STATUS: Record<string, string> = {
  planned: "planned", arrived: "arrived", triaged: "arrived", "in-progress": "in_progress", onleave: "in_progress",
  finished: "finished", cancelled: "cancelled", "entered-in-error": "entered_in_error",
};

/** v3 ActEncounterCode → the catalog's encounter_class; a class it does not list is "other". */
const CLASS: Record<string, string> = {
  AMB: "ambulatory", EMER: "emergency", IMP: "inpatient", ACUTE: "inpatient", NONAC: "inpatient", OBSENC: "observation",
  SS: "observation", VR: "virtual", HH: "home", PRENC: "ambulatory",
};

/** Participant types, most responsible first: the catalog keeps one practitioner. */
const LEAD = ["PPRF", "ATND", "SPRF", "CON"];

/** The catalog's Period from a FHIR start and end, each an instant; undefined when neither is. */
export function windowOf(start: string | undefined, end: string | undefined): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  const s = instantOf(start);
  const e = instantOf(end);
  if (s) out.start_datetime = s;
  if (e) out.end_datetime = e;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Encounter → care_encounter, identified by the encounter's id (what a note's encounter_id points to). */
export const mapEncounter: Mapper<Encounter> = (e, ctx) => {
  const encounter_id = resourceKey(e);
  const status = STATUS[e.status];
  if (!status) return unmappable(["status"], `${e.status} has no counterpart in the catalog: send the encounter's status (planned, in-progress, finished, ...)`);
  const payload: Record<string, unknown> = { encounter_id, status, encounter_class: CLASS[e.class.code ?? ""] ?? "other" };
  const type = conceptText(e.type?.[0]) ?? conceptText(e.serviceType);
  if (type) payload.encounter_type = type;
  const period = windowOf(e.period?.start, e.period?.end);
  if (period) payload.period = period;
  const reason = conceptText(e.reasonCode?.[0]) ?? nameOf(e.reasonReference?.[0], ctx);
  if (reason) payload.reason = reason;
  const location = nameOf(e.location?.[0]?.location, ctx);
  if (location) payload.location = location;
  const participants = e.participant?.filter((p) => p.individual) ?? [];
  const lead = LEAD.map((code) => participants.find((p) => p.type?.some((t) => codeOf(t) === code))).find(Boolean) ?? participants[0];
  const practitioner = clinicianOf(lead?.individual, ctx, conceptText(lead?.type?.[0]));
  if (practitioner) payload.practitioner = practitioner;
  return { ok: true, logs: [{ log_type: "care_encounter", payload }] };
};
