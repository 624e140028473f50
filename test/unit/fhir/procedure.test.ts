import { describe, expect, it } from "vitest";
import type { Condition, Procedure } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const gallstones: Condition = {
  resourceType: "Condition",
  id: "cholelithiasis",
  code: { coding: [{ system: "http://snomed.info/sct", code: "235919008", display: "Gallstone" }], text: "Symptomatic gallstones" },
  subject: { reference: "Patient/example" },
};

/** After the R4 specification's example of a completed surgical procedure with its reason and outcome (written anew). */
const cholecystectomy: Procedure = {
  resourceType: "Procedure",
  id: "proc-lap-chole",
  status: "completed",
  category: { coding: [{ system: "http://snomed.info/sct", code: "387713003", display: "Surgical procedure" }] },
  code: {
    coding: [
      { system: "http://www.ama-assn.org/go/cpt", code: "47562", display: "Laparoscopy, surgical; cholecystectomy" },
      { system: "http://snomed.info/sct", code: "45595009", display: "Laparoscopic cholecystectomy" },
    ],
    text: "Laparoscopic cholecystectomy",
  },
  subject: { reference: "Patient/example" },
  encounter: { reference: "Encounter/enc-surg-0412" },
  performedPeriod: { start: "2025-04-12T08:05:00+01:00", end: "2025-04-12T09:20:00+01:00" },
  performer: [{
    function: { coding: [{ system: "http://snomed.info/sct", code: "304292004", display: "Surgeon" }] },
    actor: { reference: "Practitioner/dr-okafor", display: "Dr. Ngozi Okafor" },
  }],
  reasonReference: [{ reference: "Condition/cholelithiasis" }],
  bodySite: [{ coding: [{ system: "http://snomed.info/sct", code: "28231008", display: "Gallbladder structure" }] }],
  outcome: { coding: [{ system: "http://snomed.info/sct", code: "385669000", display: "Successful" }] },
  followUp: [{ text: "Wound check at day 10" }],
};

describe("Procedure", () => {
  it("becomes a procedure with its CPT code, period start, site, surgeon, outcome, reason and encounter", () => {
    const [log, ...rest] = derived(cholecystectomy, gallstones);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "procedure",
      timestamp: "2025-04-12T08:05:00+01:00",
      payload: {
        procedure_name: "Laparoscopic cholecystectomy", procedure_code: "47562", code_system: "CPT", status: "completed",
        performed_date: "2025-04-12T08:05:00+01:00", body_site: "Gallbladder structure",
        performer: { name: "Dr. Ngozi Okafor", role: "Surgeon" }, outcome: "Successful", reason: "Symptomatic gallstones",
        encounter_id: "enc-surg-0412",
      },
    });
  });

  it("lands in the procedures module, keyed by code and day", () => {
    const doc = folded("procedures", derived(cholecystectomy, gallstones));
    expect(doc.procedures).toEqual([
      expect.objectContaining({ name: "Laparoscopic cholecystectomy", code: "47562", code_system: "CPT", status: "completed", performed_at: "2025-04-12T08:05:00+01:00", body_site: "Gallbladder structure" }),
    ]);
    const wrong = derived({ ...cholecystectomy, status: "entered-in-error" });
    expect(folded("procedures", derived(cholecystectomy), wrong).procedures).toEqual([]);
  });

  it("maps each event status, on-hold as in progress", () => {
    const statuses = { preparation: "preparation", "in-progress": "in_progress", "on-hold": "in_progress", "not-done": "not_done", stopped: "stopped" } as const;
    for (const [fhir, catalog] of Object.entries(statuses)) {
      expect(derived({ ...cholecystectomy, status: fhir as Procedure["status"] })[0]!.payload.status).toBe(catalog);
    }
  });

  it("refuses an unknown status and a date given in words, each at its element", () => {
    expect(refused({ ...cholecystectomy, status: "unknown" })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"] }] });
    const { performedPeriod: _p, ...undated } = cholecystectomy;
    expect(refused({ ...undated, performedString: "as a teenager" })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["performedString"] }] });
  });

  it("refuses a performed time without its zone as invalid FHIR (R4 requires one with a time), rather than file it under another day", () => {
    const { performedPeriod: _p, ...undated } = cholecystectomy;
    expect(refused({ ...undated, performedDateTime: "2025-04-12T08:05:00" })).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["performedDateTime"] }] });
  });

  it("refuses a status R4 does not have (terminology is not validated) as unmappable, and invalid FHIR at its element", () => {
    expect(refused({ ...cholecystectomy, status: "done" as never })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"] }] });
    const invalid = refused({ ...cholecystectomy, outcome: "Successful" as never });
    expect(invalid.code).toBe("fhir_invalid");
    expect(invalid.issues[0]!.path[0]).toBe("outcome");
  });
});
