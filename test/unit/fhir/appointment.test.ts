import { describe, expect, it } from "vitest";
import type { Appointment } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

/** After the R4 specification's example of a booked follow-up to discuss results, with a practitioner and a room (written anew). */
const review: Appointment = {
  resourceType: "Appointment",
  id: "appt-ct-review",
  status: "booked",
  serviceType: [{ coding: [{ code: "52", display: "General Discussion" }] }],
  appointmentType: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0276", code: "FOLLOWUP", display: "A follow up visit from a previous appointment" }], text: "Follow-up" },
  reasonReference: [{ reference: "Condition/breast-ca", display: "Carcinoma of left breast" }],
  description: "Go through the restaging CT with the patient",
  start: "2025-05-06T14:00:00Z",
  end: "2025-05-06T14:30:00Z",
  created: "2025-04-20",
  participant: [
    { actor: { reference: "Patient/example", display: "Rosa Delgado" }, required: "required", status: "accepted" },
    { type: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ParticipationType", code: "ATND" }], text: "attender" }], actor: { reference: "Practitioner/dr-hale", display: "Dr. Imogen Hale" }, status: "accepted" },
    { actor: { reference: "Location/loc-onc-3", display: "Oncology clinic, room 3" }, status: "accepted" },
  ],
};

describe("Appointment", () => {
  it("becomes a planned care_encounter named after the appointment, with its time, type, reason, room and clinician", () => {
    const [log, ...rest] = derived(review);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "care_encounter",
      timestamp: "2025-05-06T14:00:00Z",
      payload: {
        encounter_id: "Appointment/appt-ct-review", status: "planned", encounter_type: "Follow-up",
        period: { start_datetime: "2025-05-06T14:00:00Z", end_datetime: "2025-05-06T14:30:00Z" },
        reason: "Carcinoma of left breast", location: "Oncology clinic, room 3", practitioner: { name: "Dr. Imogen Hale", role: "attender" },
      },
    });
  });

  it("maps the appointment's course to the encounter's: checked in is arrived, a no-show is cancelled", () => {
    const statuses = { proposed: "planned", waitlist: "planned", "checked-in": "arrived", fulfilled: "finished", noshow: "cancelled" } as const;
    for (const [fhir, catalog] of Object.entries(statuses)) expect(derived({ ...review, status: fhir as Appointment["status"] })[0]!.payload.status).toBe(catalog);
  });

  it("lands in clinical_context's encounters beside the encounter it leads to, and a cancellation updates it", () => {
    const cancelled = { ...review, status: "cancelled" as const, cancelationReason: { text: "Patient unwell" } };
    const doc = folded("clinical_context", derived(review), derived(cancelled));
    expect(doc.encounters).toEqual([expect.objectContaining({ key: "Appointment/appt-ct-review", status: "cancelled", encounter_type: "Follow-up" })]);
  });

  it("identifies an appointment with neither id nor identifier by its content: the same one sent again is the same item", () => {
    const { id: _id, ...anonymous } = review;
    const id = derived(anonymous)[0]!.payload.encounter_id as string;
    expect(id).toMatch(/^Appointment\/content-[0-9a-f]{32}$/);
    expect(derived({ ...anonymous })[0]!.payload.encounter_id).toBe(id);
    expect(derived({ ...anonymous, status: "cancelled" })[0]!.payload.encounter_id).not.toBe(id);
  });

  it("refuses invalid FHIR (an appointment with no participant) with the element's path", () => {
    expect(refused({ ...review, participant: [] })).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["participant"] }] });
  });
});
