import { describe, expect, it } from "vitest";
import type { MedicationAdministration } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm";

/** After the R4 specification's medication administration example (written anew): one oral dose given. */
const dose: MedicationAdministration = {
  resourceType: "MedicationAdministration",
  id: "ma-1",
  status: "completed",
  medicationCodeableConcept: { coding: [{ system: RXNORM, code: "861007", display: "metformin hydrochloride 500 MG Oral Tablet" }] },
  subject: { reference: "Patient/p1" },
  effectiveDateTime: "2025-11-05T08:10:00Z",
  dosage: { route: { text: "oral" }, dose: { value: 500, unit: "mg", system: "http://unitsofmeasure.org", code: "mg" } },
};

describe("MedicationAdministration", () => {
  it("makes a completed administration a taken dose at its effective time, counted by the adherence module", () => {
    const [log] = derived(dose);
    expect(log).toMatchObject({
      log_type: "medication_adherence",
      timestamp: "2025-11-05T08:10:00Z",
      payload: { medication_adherence: [{ status: "taken", rxnorm_cui: "861007", dose_amount: 500, dose_unit: "mg" }] },
    });
    expect(folded("adherence", [log!]).medications).toMatchObject([{ rxnorm_cui: "861007", taken: 1, skipped: 0, last_status: "taken" }]);
  });

  it("makes not-done a skipped dose that keeps its reason", () => {
    const { dosage: _d, ...rest } = dose;
    const missed: MedicationAdministration = { ...rest, id: "ma-2", status: "not-done", statusReason: [{ text: "Patient was nauseous" }] };
    const [log] = derived(missed);
    expect(log!.payload.medication_adherence).toEqual([
      { status: "skipped", rxnorm_cui: "861007", medication_name: "metformin hydrochloride 500 MG Oral Tablet", extensions: { reason_not_taken: "Patient was nauseous" } },
    ]);
    expect(folded("adherence", [derived(dose)[0]!, log!]).medications).toMatchObject([{ taken: 1, skipped: 1 }]);
  });

  it("refuses entered-in-error, naming the statuses that are mapped", () => {
    expect(refused({ ...dose, status: "entered-in-error" }).issues[0]).toMatchObject({ path: ["status"], message: expect.stringMatching(/completed \(taken\).*not-done \(skipped\)/) });
  });
});
