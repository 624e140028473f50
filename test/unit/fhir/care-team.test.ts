import { describe, expect, it } from "vitest";
import type { CareTeam, Organization, Practitioner } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const oncologist: Practitioner = {
  resourceType: "Practitioner",
  id: "dr-hale",
  identifier: [{ system: "http://hl7.org/fhir/sid/us-npi", value: "1497758544" }],
  name: [{ family: "Hale", given: ["Imogen"], prefix: ["Dr."] }],
};
const clinic: Organization = { resourceType: "Organization", id: "org-riverside", name: "Riverside Cancer Centre" };
const sct = (code: string, display: string) => ({ coding: [{ system: "http://snomed.info/sct", code, display }] });

/** After the R4 specification's example team (the patient as a participant, an adviser acting for an organization), written anew. */
const team: CareTeam = {
  resourceType: "CareTeam",
  id: "ct-onc",
  status: "active",
  category: [{ coding: [{ system: "http://loinc.org", code: "LA28865-6", display: "Longitudinal care-coordination focused care team" }] }],
  name: "Breast oncology team",
  subject: { reference: "Patient/example" },
  period: { start: "2025-03-01" },
  participant: [
    { role: [{ text: "patient" }], member: { reference: "Patient/example", display: "Rosa Delgado" } },
    { role: [sct("309295000", "Clinical oncologist")], member: { reference: "Practitioner/dr-hale" }, onBehalfOf: { reference: "Organization/org-riverside" } },
    { role: [{ text: "Nurse navigator" }], member: { display: "Sam Ito, RN" } },
  ],
  managingOrganization: [{ reference: "Organization/org-riverside" }],
};

describe("CareTeam", () => {
  it("becomes one care_team log with a member per participant other than the patient", () => {
    const [log, ...rest] = derived(team, oncologist, clinic);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({ log_type: "care_team", timestamp: "2025-03-01T00:00:00Z", trace: { object_type: "CareTeam", object_id: "ct-onc" } });
    expect(log!.payload).toEqual({
      members: [
        { action: "add", role: "Clinical oncologist", name: "Imogen Hale", npi: "1497758544", organization: "Riverside Cancer Centre" },
        { action: "add", role: "Nurse navigator", name: "Sam Ito, RN", organization: "Riverside Cancer Centre" },
      ],
    });
  });

  it("lands in the care_team module, and an inactive team removes its members", () => {
    const doc = folded("care_team", derived(team, oncologist, clinic));
    expect(doc.members).toEqual([
      expect.objectContaining({ role: "Clinical oncologist", name: "Imogen Hale", npi: "1497758544", organization: "Riverside Cancer Centre" }),
      expect.objectContaining({ role: "Nurse navigator", name: "Sam Ito, RN" }),
    ]);
    const ended = derived({ ...team, status: "inactive" }, oncologist, clinic);
    expect(ended[0]!.payload.members).toEqual([expect.objectContaining({ action: "remove" }), expect.objectContaining({ action: "remove" })]);
    expect(folded("care_team", derived(team, oncologist, clinic), ended).members).toEqual([]);
  });

  it("maps a proposed team to nothing: it is not yet the patient's", () => {
    expect(refused({ ...team, status: "proposed" }).message).toMatch(/holds nothing/);
  });

  it("refuses a status outside the R4 codes at status, rather than mapping it to nothing", () => {
    expect(refused({ ...team, status: "bogus" as never })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"], message: expect.stringMatching(/proposed, active, suspended/) }] });
  });

  it("refuses a participant without a role, at its role", () => {
    const out = refused({ ...team, participant: [...team.participant!, { member: { display: "Dr. Vale" } }] }, oncologist, clinic);
    expect(out).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["participant", 3, "role"] }] });
  });

  it("refuses invalid FHIR (a participant that is not a list) with the element's path", () => {
    const out = refused({ ...team, participant: team.participant![1] as never });
    expect(out.code).toBe("fhir_invalid");
    expect(out.issues[0]!.path[0]).toBe("participant");
  });
});
