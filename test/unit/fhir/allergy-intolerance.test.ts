import { describe, expect, it } from "vitest";
import type { AllergyIntolerance } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";
import { allergyResource } from "../../../fhir/outbound/allergies.js";

const status = (system: string, code: string) => ({ coding: [{ system: `http://terminology.hl7.org/CodeSystem/${system}`, code }] });

/** After the R4 specification's example of a food allergy with a severe reaction (written anew). */
const peanut: AllergyIntolerance = {
  resourceType: "AllergyIntolerance",
  id: "alg-peanut",
  clinicalStatus: status("allergyintolerance-clinical", "active"),
  verificationStatus: status("allergyintolerance-verification", "confirmed"),
  type: "allergy",
  category: ["food"],
  criticality: "high",
  code: { coding: [{ system: "http://snomed.info/sct", code: "256349002", display: "Peanut" }], text: "Peanuts" },
  patient: { reference: "Patient/example" },
  onsetDateTime: "2019-06",
  recordedDate: "2024-02-11T09:20:00+01:00",
  reaction: [
    {
      substance: { coding: [{ system: "http://snomed.info/sct", code: "762952008", display: "Peanut extract" }] },
      manifestation: [
        { coding: [{ system: "http://snomed.info/sct", code: "39579001", display: "Anaphylactic reaction" }] },
        { coding: [{ system: "http://snomed.info/sct", code: "126485001", display: "Urticaria" }] },
      ],
      severity: "severe",
    },
    { manifestation: [{ text: "Urticaria" }], severity: "moderate" },
  ],
};

const penicillin: AllergyIntolerance = {
  resourceType: "AllergyIntolerance",
  id: "alg-pcn",
  clinicalStatus: status("allergyintolerance-clinical", "active"),
  verificationStatus: status("allergyintolerance-verification", "unconfirmed"),
  category: ["medication"],
  criticality: "unable-to-assess",
  code: { coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "7980", display: "Penicillin G" }] },
  patient: { reference: "Patient/example" },
  recordedDate: "2023-11-02",
};

describe("AllergyIntolerance", () => {
  it("becomes one allergy with its code, category, criticality, status and reactions", () => {
    const [log, ...rest] = derived(peanut);
    expect(rest).toEqual([]);
    expect(log).toMatchObject({
      log_type: "allergy_intolerance",
      timestamp: "2024-02-11T09:20:00+01:00",
      payload: {
        allergies: [{
          allergen: "Peanuts", snomed_code: "256349002", category: "food", criticality: "high", clinical_status: "active",
          reactions: ["Anaphylactic reaction", "Urticaria"], recorded_date: "2024-02-11",
        }],
      },
      trace: { object_type: "AllergyIntolerance", object_id: "alg-peanut" },
    });
    expect(log!.payload.allergies).toEqual([expect.not.objectContaining({ action: expect.anything() })]);
  });

  it("gives back the allergen's and each reaction's codings, and recordedDate with its time", () => {
    const hives = { coding: [{ system: "http://snomed.info/sct", code: "247472004", display: "Hives" }] };
    const sent: AllergyIntolerance = { ...penicillin, recordedDate: "2026-01-10T10:00:00-05:00", reaction: [{ manifestation: [hives] }] };
    const out = allergyResource("p1", folded("allergies", derived(sent)).allergies[0]!).resource;
    expect(out.code).toEqual({ coding: penicillin.code!.coding, text: "Penicillin G" });
    expect(out.reaction).toEqual([{ manifestation: [{ ...hives, text: "Hives" }] }]);
    expect(out.recordedDate).toBe("2026-01-10T10:00:00-05:00");
    // A SNOMED CT coding sent with the allergen is not repeated; a date alone stays a date.
    const peanutOut = allergyResource("p1", folded("allergies", derived({ ...peanut, recordedDate: "2024-02-11" })).allergies[0]!).resource;
    expect(peanutOut.code?.coding).toEqual(peanut.code!.coding);
    expect(peanutOut.recordedDate).toBe("2024-02-11");
  });

  it("gives back its verificationStatus and type", () => {
    const out = allergyResource("p1", folded("allergies", derived(peanut)).allergies[0]!).resource;
    expect(out).toMatchObject({ type: "allergy", verificationStatus: peanut.verificationStatus });
    expect(allergyResource("p1", folded("allergies", derived(penicillin)).allergies[0]!).resource.type).toBeUndefined();
  });

  it("lands in the allergies module, one entry per allergen", () => {
    const doc = folded("allergies", derived(peanut), derived(penicillin));
    const byName = (name: string) => doc.allergies.find((a) => a.allergen === name);
    expect(doc.allergies).toHaveLength(2);
    expect(byName("Peanuts")).toMatchObject({ allergen: "Peanuts", snomed_code: "256349002", criticality: "high", status: "active", category: "food" });
    expect(byName("Penicillin G")).toMatchObject({ snomed_code: null, criticality: "unable_to_assess", category: "medication", recorded_date: "2023-11-02" });
  });

  it("keeps a resolved status from a later version of the same allergy", () => {
    const later = { ...peanut, clinicalStatus: status("allergyintolerance-clinical", "resolved"), recordedDate: "2025-05-01T10:00:00Z" };
    const doc = folded("allergies", derived(peanut), derived(later));
    expect(doc.allergies).toEqual([expect.objectContaining({ allergen: "Peanuts", status: "resolved" })]);
    expect(doc.allergies[0]!.history.map((h) => h.status)).toEqual(["active", "resolved"]);
  });

  it("removes the allergy when it was entered in error or refuted", () => {
    // FHIR's ait-1 and ait-2: only an allergy entered in error carries no clinical status.
    const { clinicalStatus: _s, ...unasserted } = penicillin;
    const versions = [
      { ...unasserted, verificationStatus: status("allergyintolerance-verification", "entered-in-error") },
      { ...penicillin, clinicalStatus: status("allergyintolerance-clinical", "inactive"), verificationStatus: status("allergyintolerance-verification", "refuted") },
    ];
    for (const version of versions) {
      const withdrawn = derived(version);
      expect(withdrawn[0]!.payload.allergies).toEqual([expect.objectContaining({ allergen: "Penicillin G", action: "remove" })]);
      expect(folded("allergies", derived(penicillin), withdrawn).allergies).toEqual([]);
    }
  });

  it("refuses a status or criticality outside its R4 codes, each at its place", () => {
    const out = refused({ ...peanut, criticality: "severe" as never, clinicalStatus: status("allergyintolerance-clinical", "bogus"), verificationStatus: status("allergyintolerance-verification", "bogus") });
    expect(out).toMatchObject({ code: "fhir_unmappable" });
    expect(out.issues.map((i) => i.path)).toEqual([["criticality"], ["clinicalStatus", "coding", 0, "code"], ["verificationStatus", "coding", 0, "code"]]);
    expect(out.issues[1]!.message).toMatch(/active, inactive, resolved/);
  });

  it("refuses an allergy that names no substance, at code", () => {
    const { code: _c, ...unnamed } = peanut;
    expect(refused(unnamed)).toMatchObject({ code: "fhir_unmappable", issues: [{ path: ["code"] }] });
  });

  it("refuses invalid FHIR (a thirteenth month) with the element's path", () => {
    expect(refused({ ...peanut, recordedDate: "2024-13-01" })).toMatchObject({ code: "fhir_invalid", issues: [{ path: ["recordedDate"] }] });
  });
});
