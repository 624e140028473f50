import { describe, expect, it } from "vitest";
import type { MedicationStatement } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

/** After the R4 specification's medication statement example (written anew): a patient-reported medicine taken as needed. */
const ibuprofen: MedicationStatement = {
  resourceType: "MedicationStatement",
  id: "ms-3",
  status: "active",
  medicationCodeableConcept: { coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "310965", display: "ibuprofen 200 MG Oral Tablet" }] },
  subject: { reference: "Patient/p1" },
  effectivePeriod: { start: "2025-08-15" },
  dateAsserted: "2025-09-01T10:00:00Z",
  informationSource: { reference: "Patient/p1" },
  dosage: [{
    asNeededBoolean: true,
    doseAndRate: [{ doseRange: { low: { value: 1, unit: "tablet" }, high: { value: 2, unit: "tablet" } } }],
  }],
};

describe("MedicationStatement", () => {
  it("lists what the patient takes, with the dose range, as needed, since the period's start", () => {
    const [log] = derived(ibuprofen);
    expect(log).toMatchObject({
      log_type: "medication_list_update",
      payload: { medications: [{ action: "add", rxnorm_cui: "310965", medication_name: "ibuprofen 200 MG Oral Tablet", dose: "1-2 tablet", dose_unit: "tablet", frequency: "as needed", start_date: "2025-08-15" }] },
    });
    expect(folded("medications", [log!]).medications).toMatchObject([{ rxnorm_cui: "310965", dose: "1-2 tablet", frequency: "as needed" }]);
  });

  it("takes not-taken, stopped and completed off the list", () => {
    for (const status of ["not-taken", "stopped", "completed"] as const) {
      expect(derived({ ...ibuprofen, status })[0]!.payload.medications, status).toMatchObject([{ action: "delete", rxnorm_cui: "310965" }]);
    }
  });

  it("dates a stop at the version's lastUpdated, so an older active version delivered after it does not list the drug again", () => {
    const [stop] = derived({ ...ibuprofen, status: "stopped", meta: { lastUpdated: "2025-10-01T08:00:00Z" } });
    const [older] = derived({ ...ibuprofen, meta: { lastUpdated: "2025-08-15T08:00:00Z" } });
    expect(stop!.timestamp).toBe("2025-10-01T08:00:00Z");
    expect(older!.timestamp).toBe("2025-08-15T00:00:00Z");
    expect(folded("medications", [stop!], [older!]).medications).toEqual([]);
  });

  it("dates a stop at the period's end, so the state before it still lists the medication", () => {
    const [taken] = derived({ ...ibuprofen, effectivePeriod: undefined, effectiveDateTime: "2026-06-01" });
    const [stop] = derived({ ...ibuprofen, status: "stopped", effectivePeriod: { start: "2026-06-01", end: "2026-11-01" } });
    expect(stop!.timestamp).toBe("2026-11-01T00:00:00Z");
    expect(derived({ ...ibuprofen, status: "completed", effectivePeriod: { start: "2026-06-01", end: "2026-11-01" } })[0]!.timestamp).toBe("2026-11-01T00:00:00Z");
    // The end wins over lastUpdated: it is when the patient stopped, not when the source wrote it down.
    expect(derived({ ...ibuprofen, status: "stopped", meta: { lastUpdated: "2026-11-20T00:00:00Z" }, effectivePeriod: { start: "2026-06-01", end: "2026-11-01" } })[0]!.timestamp).toBe("2026-11-01T00:00:00Z");
    // Entered in error says the listing was a mistake, not that it ended: its period end is no stop date.
    expect(derived({ ...ibuprofen, status: "entered-in-error", effectivePeriod: { start: "2026-06-01", end: "2026-11-01" } })[0]!.timestamp).toBe("2026-06-01T00:00:00Z");
    expect(folded("medications", [taken!], [stop!]).medications).toEqual([]);
  });

  it("refuses intended and unknown, which say neither taken nor stopped", () => {
    expect(refused({ ...ibuprofen, status: "intended" }).issues[0]).toMatchObject({ path: ["status"], message: expect.stringMatching(/not-taken \(delete\)/) });
  });

  it("refuses a medication with neither an RxNorm code nor a name", () => {
    const out = refused({ ...ibuprofen, medicationCodeableConcept: { coding: [{ system: "http://example.org/formulary", code: "X-12" }] } });
    expect(out.issues[0]).toMatchObject({ path: ["medicationCodeableConcept"], message: expect.stringMatching(/RxNorm coding or text/) });
  });
});
