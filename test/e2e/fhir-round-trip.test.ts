import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle, BundleEntry, Resource } from "@medplum/fhirtypes";
import { validateFhir } from "../../fhir/validate.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * FHIR round trip (issue 29): a patient filled only through a FHIR transaction Bundle (its
 * Patient created from its identifier), read back as the patient summary document, which
 * the R4 validator passes and which holds every value that went in, each resource naming
 * the logs it came from.
 */
let t: TestStack;
let pid: string;
let answer: { entry: BundleEntry[] };
let summary: Bundle;

const P = "urn:uuid:5c1f0a3e-7d2b-4c8e-9f41-2a6b8d0e1c11";
const subject = { reference: P };
const cc = (system: string, code: string, display: string) => ({ coding: [{ system, code, display }], text: display });
const LOINC = "http://loinc.org";
const SNOMED = "http://snomed.info/sct";
const UCUM = "http://unitsofmeasure.org";
const category = (code: string) => [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code }] }];
const qty = (value: number, unit: string, code = unit) => ({ value, unit, system: UCUM, code });

const resources: Resource[] = [
  {
    resourceType: "Patient", id: "ehr-77", identifier: [{ system: "urn:oid:2.16.840.1.113883.19.5", value: "MRN-4410" }],
    name: [{ use: "official", family: "Okafor", given: ["Grace"] }], gender: "female", birthDate: "1961-04-17",
    telecom: [{ system: "phone", value: "+1 555 0100", use: "mobile" }], address: [{ line: ["4 Elm Street"], city: "Springfield", postalCode: "01101", country: "US" }],
  },
  { resourceType: "Condition", id: "cond-1", subject, clinicalStatus: cc("http://terminology.hl7.org/CodeSystem/condition-clinical", "active", "Active"), code: cc(SNOMED, "44054006", "Type 2 diabetes mellitus"), onsetDateTime: "2019-03-02", recordedDate: "2019-03-05T10:00:00Z" },
  { resourceType: "AllergyIntolerance", id: "alg-1", patient: subject, clinicalStatus: cc("http://terminology.hl7.org/CodeSystem/allergyintolerance-clinical", "active", "Active"), code: cc(SNOMED, "91936005", "Allergy to penicillin"), recordedDate: "2020-01-10", reaction: [{ manifestation: [cc(SNOMED, "247472004", "Hives")] }] },
  { resourceType: "MedicationStatement", id: "med-1", subject, status: "active", medicationCodeableConcept: cc("http://www.nlm.nih.gov/research/umls/rxnorm", "860975", "Metformin 500 MG Oral Tablet"), effectiveDateTime: "2024-05-01", dosage: [{ text: "500 mg twice daily", timing: { repeat: { frequency: 2, period: 1, periodUnit: "d" } }, doseAndRate: [{ doseQuantity: qty(500, "mg") }] }] },
  { resourceType: "Immunization", id: "imm-1", patient: subject, status: "completed", vaccineCode: cc("http://hl7.org/fhir/sid/cvx", "140", "Influenza, seasonal, injectable"), occurrenceDateTime: "2025-10-02" },
  { resourceType: "Procedure", id: "proc-1", subject, status: "completed", code: cc(SNOMED, "73761001", "Colonoscopy"), performedDateTime: "2023-06-14" },
  { resourceType: "Observation", id: "glu-1", subject, status: "final", category: category("laboratory"), code: cc(LOINC, "2345-7", "Glucose [Mass/volume] in Serum or Plasma"), effectiveDateTime: "2025-11-03T08:00:00Z", valueQuantity: qty(131, "mg/dL"), referenceRange: [{ low: qty(70, "mg/dL"), high: qty(99, "mg/dL") }] },
  {
    resourceType: "Observation", id: "bp-1", subject, status: "final", category: category("vital-signs"), code: cc(LOINC, "85354-9", "Blood pressure panel"), effectiveDateTime: "2025-11-03T08:10:00Z",
    component: [{ code: cc(LOINC, "8480-6", "Systolic blood pressure"), valueQuantity: qty(138, "mmHg", "mm[Hg]") }, { code: cc(LOINC, "8462-4", "Diastolic blood pressure"), valueQuantity: qty(86, "mmHg", "mm[Hg]") }],
  },
  { resourceType: "Observation", id: "hr-1", subject, status: "final", category: category("vital-signs"), code: cc(LOINC, "8867-4", "Heart rate"), effectiveDateTime: "2025-11-03T08:10:00Z", valueQuantity: qty(76, "/min") },
  { resourceType: "Observation", id: "wt-1", subject, status: "final", category: category("vital-signs"), code: cc(LOINC, "29463-7", "Body weight"), effectiveDateTime: "2025-11-03T08:10:00Z", valueQuantity: qty(82.5, "kg") },
  {
    resourceType: "DiagnosticReport", id: "dr-1", subject, status: "final", category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/v2-0074", code: "LAB" }] }], code: cc(LOINC, "4548-4", "Hemoglobin A1c panel"),
    effectiveDateTime: "2025-11-03T08:00:00Z", issued: "2025-11-03T15:00:00Z", result: [{ reference: "#a1c" }],
    contained: [{ resourceType: "Observation", id: "a1c", status: "final", category: category("laboratory"), code: cc(LOINC, "4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood"), effectiveDateTime: "2025-11-03T08:00:00Z", valueQuantity: qty(7.4, "%"), referenceRange: [{ high: qty(5.7, "%") }] }],
  },
];

beforeAll(async () => {
  t = await startStack({});
  const bundle = { resourceType: "Bundle", type: "transaction", entry: resources.map((resource, i) => ({ fullUrl: i === 0 ? P : `urn:uuid:00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, resource })) };
  const r = await t.app.inject({ method: "POST", url: "/v1/fhir?create_patients=true", headers: t.auth, payload: bundle });
  expect(r.statusCode, r.body).toBe(200);
  answer = r.json();
  pid = (await t.app.inject({ method: "GET", url: "/v1/patients?system=urn:oid:2.16.840.1.113883.19.5&value=MRN-4410", headers: t.auth })).json().patients[0].id;
  const s = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/fhir/summary`, headers: t.auth });
  expect(s.statusCode, s.body).toBe(200);
  summary = s.json();
});

afterAll(async () => {
  await t?.close();
});

describe("FHIR round trip", () => {
  it("stores every entry of the transaction", () => {
    expect(answer.entry.map((e) => e.response?.status)).toEqual(resources.map(() => "201 Created"));
  });

  it("answers a summary document the R4 validator passes, entry by entry", () => {
    expect(summary).toMatchObject({ resourceType: "Bundle", type: "document" });
    expect(validateFhir(summary)).toEqual([]);
    for (const e of summary.entry ?? []) expect(validateFhir(e.resource!), e.resource!.resourceType).toEqual([]);
  });

  it("holds every value that went in", () => {
    const text = JSON.stringify(summary);
    const values = [
      "MRN-4410", "Okafor", "Grace", "1961-04-17", "female", "+1 555 0100", "Springfield",
      "44054006", "Type 2 diabetes mellitus", "91936005", "Allergy to penicillin", "860975", "Metformin 500 MG Oral Tablet",
      "140", "Influenza, seasonal, injectable", "2025-10-02", "73761001", "Colonoscopy", "2023-06-14",
      "2345-7", "4548-4", "85354-9", "8480-6", "8462-4", "8867-4", "29463-7",
    ];
    for (const v of values) expect(text, v).toContain(v);
    const numbers = (code: string) => (summary.entry ?? []).flatMap((e) => {
      const o = e.resource as { resourceType: string; code?: { coding?: { code?: string }[] }; valueQuantity?: { value?: number }; component?: { code: { coding?: { code?: string }[] }; valueQuantity?: { value?: number } }[] };
      if (o.resourceType !== "Observation") return [];
      const own = o.code?.coding?.some((c) => c.code === code) ? [o.valueQuantity?.value] : [];
      return [...own, ...(o.component ?? []).filter((c) => c.code.coding?.some((x) => x.code === code)).map((c) => c.valueQuantity?.value)];
    });
    expect(numbers("2345-7")).toContain(131);
    expect(numbers("4548-4")).toContain(7.4);
    expect(numbers("8480-6")).toContain(138);
    expect(numbers("8462-4")).toContain(86);
    expect(numbers("8867-4")).toContain(76);
    expect(numbers("29463-7")).toContain(82.5);
  });

  it("names, for each resource, the logs it came from", () => {
    const stored = answer.entry.flatMap((e) => (e.response?.outcome as { issue: { details: { text: string } }[] }).issue.map((i) => /log (log_\S+)/.exec(i.details.text)?.[1]));
    const named = new Set((summary.entry ?? []).filter((e) => e.resource?.resourceType === "Provenance").flatMap((e) => (e.resource as { entity?: { what: { identifier?: { value?: string } } }[] }).entity?.map((x) => x.what.identifier?.value) ?? []));
    for (const id of stored) expect(named.has(id), `log ${id}`).toBe(true);
  });
});
