import { describe, expect, it } from "vitest";
import type { Medication, MedicationRequest } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm";

/** After the R4 specification's medication request examples (written anew): a twice-daily tablet with set times. */
const metformin: MedicationRequest = {
  resourceType: "MedicationRequest",
  id: "rx-100",
  status: "active",
  intent: "order",
  medicationCodeableConcept: { coding: [{ system: RXNORM, code: "861007", display: "metformin hydrochloride 500 MG Oral Tablet" }], text: "Metformin 500 mg tablet" },
  subject: { reference: "Patient/p1" },
  authoredOn: "2025-06-10T15:20:00+02:00",
  requester: { reference: "Practitioner/dr-li", display: "Dr. Mei Li" },
  dosageInstruction: [{
    text: "One tablet twice a day with meals",
    timing: { repeat: { frequency: 2, period: 1, periodUnit: "d", timeOfDay: ["08:00:00", "19:30:00"] } },
    route: { coding: [{ system: "http://snomed.info/sct", code: "26643006", display: "Oral route" }] },
    doseAndRate: [{ doseQuantity: { value: 500, unit: "mg", system: "http://unitsofmeasure.org", code: "mg" } }],
  }],
};

describe("MedicationRequest", () => {
  it("adds the medication to the list with its RxNorm code, dose, frequency, times, route, start and prescriber", () => {
    const [log, ...rest] = derived(metformin);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "medication_list_update",
      timestamp: "2025-06-10T15:20:00+02:00",
      payload: {
        medications: [{
          action: "add", rxnorm_cui: "861007", medication_name: "Metformin 500 mg tablet", dose: "500 mg", dose_unit: "mg", frequency: "BID",
          schedule_times: ["08:00", "19:30"], route: "Oral route", start_date: "2025-06-10", prescribed_by: { name: "Dr. Mei Li" },
          extensions: { dosage_text: "One tablet twice a day with meals" },
        }],
      },
    });
    const listed = folded("medications", [log!]).medications;
    expect(listed).toMatchObject([{ rxnorm_cui: "861007", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "19:30"], start_date: "2025-06-10" }]);
  });

  it("removes the medication when the request is stopped, completed or entered in error", () => {
    for (const status of ["stopped", "completed", "entered-in-error", "cancelled"] as const) {
      const [stop] = derived({ ...metformin, id: `rx-${status}`, status });
      expect(stop!.payload.medications, status).toEqual([{ action: "delete", rxnorm_cui: "861007", medication_name: "Metformin 500 mg tablet" }]);
      expect(folded("medications", [derived(metformin)[0]!, { ...stop!, timestamp: "2025-07-01T00:00:00Z" }]).medications).toEqual([]);
    }
  });

  it("dates a stop at the version's lastUpdated, so an older active version delivered after it does not bring the drug back", () => {
    const version = (status: MedicationRequest["status"], lastUpdated: string): MedicationRequest =>
      ({ ...metformin, id: "mr9", status, authoredOn: "2026-06-01T10:00:00Z", meta: { lastUpdated } });
    const [stop] = derived(version("stopped", "2026-09-01T10:00:00Z"));
    const [older] = derived(version("active", "2026-06-01T10:00:00Z"));
    expect(stop!.timestamp).toBe("2026-09-01T10:00:00Z");
    // The active version stays at authoredOn: the state as of any time since then lists it.
    expect(older!.timestamp).toBe("2026-06-01T10:00:00Z");
    // Stored in arrival order: the stop, then the older active version.
    expect(folded("medications", [stop!], [older!]).medications).toEqual([]);
    expect(folded("medications", [older!]).medications).toMatchObject([{ rxnorm_cui: "861007" }]);
    // Without lastUpdated both versions are at authoredOn: the one accepted last wins.
    const { meta: _m, ...undated } = version("stopped", "2026-09-01T10:00:00Z");
    expect(derived(undated)[0]!.timestamp).toBe("2026-06-01T10:00:00Z");
  });

  it("reads a contained Medication by reference, with its form", () => {
    const med: Medication = {
      resourceType: "Medication", id: "m1",
      code: { coding: [{ system: RXNORM, code: "314076", display: "lisinopril 10 MG Oral Tablet" }] },
      form: { coding: [{ system: "http://snomed.info/sct", code: "385055001", display: "Tablet" }] },
    };
    const { medicationCodeableConcept: _m, ...rest } = metformin;
    const byRef: MedicationRequest = { ...rest, contained: [med], medicationReference: { reference: "#m1" } };
    expect(derived(byRef, med)[0]!.payload.medications).toMatchObject([{ rxnorm_cui: "314076", medication_name: "lisinopril 10 MG Oral Tablet", form: "Tablet" }]);
  });

  it("writes a timing without a code as the frequency prescriptions use", () => {
    const every8h = { ...metformin, dosageInstruction: [{ timing: { repeat: { frequency: 1, period: 8, periodUnit: "h" as const } } }] };
    expect(derived(every8h)[0]!.payload.medications).toMatchObject([{ frequency: "Q8H" }]);
    const weekly = { ...metformin, dosageInstruction: [{ timing: { repeat: { frequency: 1, period: 1, periodUnit: "wk" as const } } }] };
    expect(derived(weekly)[0]!.payload.medications).toMatchObject([{ frequency: "once weekly" }]);
  });

  it("refuses a Medication reference it cannot resolve, saying to contain it or send it in the Bundle", () => {
    const { medicationCodeableConcept: _m, ...rest } = metformin;
    const out = refused({ ...rest, medicationReference: { reference: "Medication/elsewhere" } });
    expect(out.issues[0]).toMatchObject({ path: ["medicationReference", "reference"], message: expect.stringMatching(/contain the Medication, send it in the same Bundle/) });
  });

  it("refuses a draft, naming the statuses that are mapped", () => {
    expect(refused({ ...metformin, status: "draft" }).issues[0]).toMatchObject({ path: ["status"], message: expect.stringMatching(/active \(add\).*stopped \(delete\)/) });
  });
});
