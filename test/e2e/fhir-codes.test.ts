import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AllergyIntolerance, Bundle, Condition, Patient, Resource } from "@medplum/fhirtypes";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * What POST /v1/fhir/resource takes in comes back out of the summary as sent: code
 * systems, codings and the precision of dates.
 */
let t: TestStack;
let pid: string;
let summary: Bundle;

const post = (url: string, payload: unknown) => t.app.inject({ method: "POST", url, headers: t.auth, payload: payload as object });
const sent: Resource[] = [
  { resourceType: "Patient", id: "ehr-1", name: [{ use: "official", family: "Chalmers", given: ["Peter", "James"] }] },
  {
    resourceType: "Condition", id: "dm-1", subject: { reference: "Patient/ehr-1" }, onsetDateTime: "2020-01-01",
    category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-category", code: "encounter-diagnosis" }] }],
    verificationStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-ver-status", code: "confirmed" }] },
    code: { coding: [{ system: "http://hl7.org/fhir/sid/icd-10-cm", code: "E11.65" }], text: "Type 2 diabetes mellitus with hyperglycemia" },
  },
  {
    resourceType: "AllergyIntolerance", id: "pcn-1", patient: { reference: "Patient/ehr-1" }, recordedDate: "2026-01-10T10:00:00-05:00",
    clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", code: "active" }] }, type: "intolerance",
    verificationStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", code: "unconfirmed" }] },
    code: { coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "7980", display: "Penicillin G" }] },
    reaction: [{ manifestation: [{ coding: [{ system: "http://snomed.info/sct", code: "247472004", display: "Hives" }] }] }],
  },
];
const outOf = <R extends Resource>(type: R["resourceType"]): R => (summary.entry ?? []).map((e) => e.resource!).find((r): r is R => r.resourceType === type)!;

beforeAll(async () => {
  t = await startStack({});
  pid = (await post("/v1/patients", { first_name: "Nia" })).json().id;
  for (const resource of sent) {
    const r = (await post("/v1/fhir/resource", { patient_id: pid, resource })).json();
    expect(r, JSON.stringify(r)).toMatchObject({ accepted: 1, failed: 0 });
  }
  const s = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/summary`, headers: t.auth });
  expect(s.statusCode, s.body).toBe(200);
  summary = s.json();
});

afterAll(async () => {
  await t?.close();
});

describe("FHIR codes in and out", () => {
  it("exports every given name of the Patient, not only the record's first name", () => {
    expect(outOf<Patient>("Patient").name).toEqual([{ use: "official", text: "Peter James Chalmers", family: "Chalmers", given: ["Peter", "James"] }]);
  });

  it("exports an ICD-10-CM Condition code under ICD-10-CM, not WHO ICD-10", () => {
    expect(outOf<Condition>("Condition").code?.coding).toEqual([{ system: "http://hl7.org/fhir/sid/icd-10-cm", code: "E11.65" }]);
  });

  it("exports the verificationStatus a Condition and an AllergyIntolerance came with, an allergy's type, and no assertedDate the source did not give", () => {
    const c = outOf<Condition>("Condition");
    expect(c.verificationStatus).toEqual({ coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-ver-status", code: "confirmed" }] });
    expect(c.onsetDateTime).toBe("2020-01-01");
    expect(c.extension).toBeUndefined();
    const a = outOf<AllergyIntolerance>("AllergyIntolerance");
    expect(a).toMatchObject({ type: "intolerance", verificationStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/allergyintolerance-verification", code: "unconfirmed" }] } });
  });

  it("exports an AllergyIntolerance with its allergen and manifestation codings and its recordedDate to the second", () => {
    const a = outOf<AllergyIntolerance>("AllergyIntolerance");
    expect(a.code).toEqual({ coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "7980", display: "Penicillin G" }], text: "Penicillin G" });
    expect(a.reaction?.[0]?.manifestation).toEqual([{ coding: [{ system: "http://snomed.info/sct", code: "247472004", display: "Hives" }], text: "Hives" }]);
    expect(a.recordedDate).toBe("2026-01-10T10:00:00-05:00");
  });
});
