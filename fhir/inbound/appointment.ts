import type { Appointment } from "@medplum/fhirtypes";
import { conceptText, instantOf, resourceKey } from "../lib/datatypes.js";
import { clinicianOf, nameOf } from "../lib/people.js";
import { unmappable, type Mapper } from "../types.js";
import { windowOf } from "./encounter.js";

/**
 * FHIR appointmentstatus → the catalog's encounter status. Everything before the visit is
 * planned; checked-in is arrived; fulfilled is finished. noshow has no counterpart: the
 * visit did not happen, so cancelled (fhir_resource keeps the reason).
 */
const STATUS: Record<string, string> = {
  proposed: "planned", pending: "planned", booked: "planned", waitlist: "planned", arrived: "arrived", "checked-in": "arrived",
  fulfilled: "finished", cancelled: "cancelled", noshow: "cancelled", "entered-in-error": "entered_in_error",
};

/**
 * Appointment → care_encounter, identified as `Appointment/<id>`: an appointment and the
 * encounter it leads to are two items, and ids of different resource types may repeat.
 */
export const mapAppointment: Mapper<Appointment> = (a, ctx) => {
  const key = resourceKey(a);
  const status = STATUS[a.status];
  if (!status) return unmappable(["status"], `${a.status} is not an appointment status of R4 (proposed, booked, arrived, fulfilled, cancelled, ...)`);
  const payload: Record<string, unknown> = { encounter_id: `Appointment/${key}`, status };
  const type = conceptText(a.appointmentType) ?? conceptText(a.serviceType?.[0]);
  if (type) payload.encounter_type = type;
  const period = windowOf(a.start, a.end);
  if (period) payload.period = period;
  const reason = conceptText(a.reasonCode?.[0]) ?? nameOf(a.reasonReference?.[0], ctx) ?? a.description;
  if (reason) payload.reason = reason;
  const kind = (p: (typeof a.participant)[number]) => p.actor?.reference?.split("/")[0];
  const location = nameOf(a.participant.find((p) => kind(p) === "Location")?.actor, ctx);
  if (location) payload.location = location;
  const clinician = a.participant.find((p) => kind(p) === "Practitioner" || kind(p) === "PractitionerRole");
  const practitioner = clinicianOf(clinician?.actor, ctx, conceptText(clinician?.type?.[0]));
  if (practitioner) payload.practitioner = practitioner;
  const timestamp = instantOf(a.start) ?? instantOf(a.created);
  return { ok: true, logs: [{ log_type: "care_encounter", ...(timestamp ? { timestamp } : {}), payload }] };
};
