import { describe, expect, it } from "vitest";
import type { FamilyMemberHistory } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const roleCode = (code: string, display: string) => ({ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v3-RoleCode", code, display }] });

/** After the R4 specification's example of a parent's history with a condition at a stated age (written anew). */
const mother: FamilyMemberHistory = {
  resourceType: "FamilyMemberHistory",
  id: "fmh-mother",
  status: "completed",
  patient: { reference: "Patient/example" },
  date: "2025-01-20",
  name: "Margaret",
  relationship: roleCode("MTH", "mother"),
  sex: { coding: [{ system: "http://hl7.org/fhir/administrative-gender", code: "female" }] },
  deceasedAge: { value: 68, unit: "yr", system: "http://unitsofmeasure.org", code: "a" },
  condition: [
    {
      code: {
        coding: [
          { system: "http://snomed.info/sct", code: "254837009", display: "Malignant neoplasm of breast" },
          { system: "http://hl7.org/fhir/sid/icd-10-cm", code: "C50.919" },
        ],
        text: "Breast cancer",
      },
      contributedToDeath: true,
      onsetAge: { value: 52, unit: "yr", system: "http://unitsofmeasure.org", code: "a" },
    },
    { code: { text: "Type 2 diabetes" }, onsetAge: { value: 660, unit: "months", system: "http://unitsofmeasure.org", code: "mo" } },
  ],
};

const grandmother: FamilyMemberHistory = {
  resourceType: "FamilyMemberHistory",
  id: "fmh-mgm",
  status: "partial",
  patient: { reference: "Patient/example" },
  relationship: { text: "Maternal grandmother" },
  deceasedBoolean: true,
  condition: [{ code: { coding: [{ system: "http://snomed.info/sct", code: "230690007", display: "Stroke" }] } }],
};

describe("FamilyMemberHistory", () => {
  it("becomes one relative with their conditions, onset ages in years and cause of death", () => {
    const [log, ...rest] = derived(mother);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "family_history",
      timestamp: "2025-01-20T00:00:00Z",
      payload: {
        relationship: "mother", name: "Margaret", status: "completed", sex: "female", deceased: true,
        conditions: [
          { condition: "Breast cancer", snomed_code: "254837009", icd10_code: "C50.919", onset_age_years: 52, contributed_to_death: true },
          { condition: "Type 2 diabetes", onset_age_years: 55 },
        ],
      },
    });
  });

  it("spells a relationship sent as text the way its code would be", () => {
    expect(derived(grandmother)[0]!.payload).toMatchObject({ relationship: "maternal_grandmother", status: "partial", deceased: true, conditions: [{ condition: "Stroke", snomed_code: "230690007" }] });
    expect(derived({ ...grandmother, relationship: roleCode("MGRMTH", "maternal grandmother") })[0]!.payload.relationship).toBe("maternal_grandmother");
  });

  it("lands in the family_history module, one entry per relative, and entered-in-error withdraws it", () => {
    const doc = folded("family_history", derived(mother), derived(grandmother));
    expect(doc.relatives).toHaveLength(2);
    expect(doc.relatives.find((r) => r.relationship === "mother")).toMatchObject({
      name: "Margaret", sex: "female", deceased: true, status: "completed",
      conditions: [
        { condition: "Breast cancer", snomed_code: "254837009", icd10_code: "C50.919", onset_age_years: 52, contributed_to_death: true },
        { condition: "Type 2 diabetes", snomed_code: null, icd10_code: null, onset_age_years: 55, contributed_to_death: null },
      ],
    });
    const wrong = derived({ ...grandmother, status: "entered-in-error" });
    expect(folded("family_history", derived(grandmother), wrong).relatives).toEqual([]);
  });

  it("refuses a condition that names nothing, at its code", () => {
    const out = refused({ ...mother, condition: [mother.condition![0]!, { code: { coding: [{ system: "http://snomed.info/sct" }] } }] });
    expect(out).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["condition", 1, "code"] }] });
  });

  it("refuses a status outside the R4 codes at status, rather than leaving it out", () => {
    expect(refused({ ...mother, status: "bogus" as never })).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["status"], message: expect.stringMatching(/partial, completed/) }] });
  });

  it("refuses invalid FHIR (a relative without a relationship) with the element's path", () => {
    const { relationship: _r, ...unrelated } = mother;
    expect(refused(unrelated as FamilyMemberHistory)).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["relationship"] }] });
  });
});
