import { describe, expect, it } from "vitest";
import type { Encounter, Location } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const clinicRoom: Location = { resourceType: "Location", id: "loc-onc-3", name: "Oncology clinic, room 3" };
const participantType = (code: string, display: string) => [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-ParticipationType", code, display }] }];

/** After the R4 specification's example of an ambulatory consultation with its participants and reason (written anew). */
const visit: Encounter = {
  resourceType: "Encounter",
  id: "enc-0412",
  status: "finished",
  class: { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "AMB", display: "ambulatory" },
  type: [{ coding: [{ system: "http://snomed.info/sct", code: "11429006", display: "Consultation" }], text: "Oncology follow-up" }],
  subject: { reference: "Patient/example" },
  participant: [
    { type: participantType("ATND", "attender"), individual: { display: "Dr. Priya Raman" } },
    { type: participantType("PPRF", "primary performer"), individual: { reference: "Practitioner/dr-hale", display: "Dr. Imogen Hale" } },
  ],
  period: { start: "2025-04-02T09:30:00+01:00", end: "2025-04-02T10:05:00+01:00" },
  reasonCode: [{ text: "Review of cycle 3 toxicity" }],
  location: [{ location: { reference: "Location/loc-onc-3" } }],
};

describe("Encounter", () => {
  it("becomes a care_encounter with its class, type, period, reason, place and primary performer", () => {
    const [log, ...rest] = derived(visit, clinicRoom);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "care_encounter",
      timestamp: "2025-04-02T09:30:00+01:00",
      payload: {
        encounter_id: "enc-0412", status: "finished", encounter_class: "ambulatory", encounter_type: "Oncology follow-up",
        period: { start_datetime: "2025-04-02T09:30:00+01:00", end_datetime: "2025-04-02T10:05:00+01:00" },
        reason: "Review of cycle 3 toxicity", location: "Oncology clinic, room 3", practitioner: { name: "Dr. Imogen Hale", role: "primary performer" },
      },
    });
  });

  it("maps each status and class the catalog has a word for", () => {
    const statuses = { planned: "planned", arrived: "arrived", triaged: "arrived", "in-progress": "in_progress", onleave: "in_progress", cancelled: "cancelled" } as const;
    for (const [fhir, catalog] of Object.entries(statuses)) expect(derived({ ...visit, status: fhir as Encounter["status"] })[0]!.payload.status).toBe(catalog);
    const classes = { EMER: "emergency", IMP: "inpatient", OBSENC: "observation", VR: "virtual", HH: "home", FLD: "other" };
    for (const [code, catalog] of Object.entries(classes)) expect(derived({ ...visit, class: { code } })[0]!.payload.encounter_class).toBe(catalog);
  });

  it("lands in clinical_context's encounters, updated by a later version and withdrawn by entered-in-error", () => {
    const planned = { ...visit, status: "planned" as const, period: { start: "2025-04-02T09:30:00+01:00" } };
    const doc = folded("clinical_context", derived(planned), derived(visit, clinicRoom));
    expect(doc.encounters).toEqual([expect.objectContaining({ key: "enc-0412", status: "finished", location: "Oncology clinic, room 3" })]);
    const wrong = derived({ ...visit, status: "entered-in-error" });
    expect(folded("clinical_context", derived(visit), wrong).encounters).toEqual([]);
  });

  it("refuses the status unknown, which the catalog has no word for, at status", () => {
    expect(refused({ ...visit, status: "unknown" })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"] }] });
  });

  it("refuses invalid FHIR (an encounter without a class) with the element's path", () => {
    const { class: _c, ...classless } = visit;
    expect(refused(classless as Encounter)).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["class"] }] });
  });
});
