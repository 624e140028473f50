import { describe, expect, it } from "vitest";
import type { AllergyIntolerance, Bundle, Composition, Condition, Immunization, MedicationStatement, Observation, Patient, Procedure, Provenance, Resource } from "@medplum/fhirtypes";
import { validateFhir } from "../../../fhir/validate.js";
import { LOG_SYSTEM, logIdsOf, summaryBundle } from "../../../fhir/outbound/index.js";
import { input, LOGS } from "./outbound-fixture.js";

const NOW = "2026-03-01T12:00:00.000Z";
const bundle = summaryBundle(input(), { now: NOW });
const resources = (bundle.entry ?? []).map((e) => e.resource!);
const ofType = <R extends Resource>(t: R["resourceType"]) => resources.filter((r): r is R => r.resourceType === t);
const one = <R extends Resource>(t: R["resourceType"]) => {
  const all = ofType<R>(t);
  expect(all, t).toHaveLength(1);
  return all[0]!;
};
const urlOf = (r: Resource) => bundle.entry!.find((e) => e.resource === r)!.fullUrl!;
const provenanceOf = (r: Resource) => ofType<Provenance>("Provenance").find((p) => p.target[0]!.reference === urlOf(r));

describe("the patient summary Bundle", () => {
  it("validates as FHIR R4, the Bundle and every entry on its own", () => {
    expect(validateFhir(bundle)).toEqual([]);
    for (const r of resources) expect(validateFhir(r), `${r.resourceType}/${r.id}`).toEqual([]);
  });

  it("is a document whose Composition comes first, with the IPS sections by LOINC, each referencing its entries", () => {
    expect(bundle).toMatchObject({ type: "document", timestamp: "2026-03-01T12:00:00.000Z", identifier: { system: "urn:ietf:rfc:3986" } });
    const c = resources[0] as Composition;
    expect(c.resourceType).toBe("Composition");
    expect(c.type.coding?.[0]?.code).toBe("60591-5");
    expect(c.section?.map((s) => s.code?.coding?.[0]?.code)).toEqual(["11450-4", "48765-2", "10160-0", "11369-6", "47519-4", "30954-2", "8716-3"]);
    const urls = new Set(bundle.entry!.map((e) => e.fullUrl));
    for (const s of c.section ?? []) for (const e of s.entry ?? []) expect(urls.has(e.reference)).toBe(true);
    const bySection = Object.fromEntries((c.section ?? []).map((s) => [s.code!.coding![0]!.code, (s.entry ?? []).map((e) => bundle.entry!.find((x) => x.fullUrl === e.reference)!.resource!.resourceType)]));
    expect(bySection).toEqual({
      "11450-4": ["Condition"], "48765-2": ["AllergyIntolerance"], "10160-0": ["MedicationStatement"], "11369-6": ["Immunization"],
      "47519-4": ["Procedure"], "30954-2": ["Observation", "Observation"], "8716-3": ["Observation", "Observation", "Observation", "Observation"],
    });
  });

  it("gives an empty section an emptyReason and a narrative, and validates still", () => {
    const b = summaryBundle(input(LOGS.filter((l) => l.log_type === "demographics")), { now: NOW });
    expect(validateFhir(b)).toEqual([]);
    const sections = (b.entry![0]!.resource as Composition).section!;
    expect(sections.every((s) => s.entry === undefined && s.emptyReason?.coding?.[0]?.code === "unavailable" && s.text?.div.includes("No "))).toBe(true);
  });

  it("is the same for the same state apart from the timestamp", () => {
    const again = summaryBundle(input(), { now: "2026-03-02T08:00:00Z" });
    const strip = (b: Bundle) => JSON.stringify({ ...b, timestamp: undefined, entry: b.entry!.map((e) => (e.resource?.resourceType === "Composition" ? { ...e, resource: { ...e.resource, date: undefined } } : e)) });
    expect(strip(again)).toBe(strip(bundle));
    expect(bundle.entry!.every((e) => /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(e.fullUrl!))).toBe(true);
  });

  it("names each resource's logs in a Provenance (entity.what.identifier in urn:pss:log)", () => {
    const cond = one<Condition>("Condition");
    expect(logIdsOf(provenanceOf(cond)!)).toEqual(["log_cond"]);
    expect(provenanceOf(cond)!.entity![0]!.what.identifier!.system).toBe(LOG_SYSTEM);
    expect(logIdsOf(provenanceOf(one<Patient>("Patient"))!)).toEqual(["log_demo"]);
    const labs = ofType<Observation>("Observation").filter((o) => o.category?.[0]?.coding?.[0]?.code === "laboratory");
    expect(labs.map((o) => logIdsOf(provenanceOf(o)!))).toEqual([["log_lab1"], ["log_lab2"]]);
    expect(ofType<Provenance>("Provenance")).toHaveLength(resources.length - 1 - ofType<Provenance>("Provenance").length);
  });
});

describe("values in are values out", () => {
  it("Patient: name, birth date, gender, identifiers, telecom, address, language", () => {
    const p = one<Patient>("Patient");
    expect(p.name).toEqual([{ use: "official", text: "Ada Lovelace", family: "Lovelace", given: ["Ada"] }]);
    expect(p).toMatchObject({ birthDate: "1980-12-10", gender: "female", maritalStatus: { text: "married" } });
    expect(p.identifier).toEqual([
      { system: "urn:pss:patient", value: "pat_1" }, { system: "mrn", value: "MRN-0042" },
      { system: "urn:oid:2.16.840.1.113883.2.1.4.1", value: "943 476 5919", type: { text: "NHS" } },
    ]);
    expect(p.telecom).toEqual([{ system: "phone", value: "+44 20 7946 0000", use: "mobile", rank: 1 }, { system: "email", value: "ada@example.org" }]);
    expect(p.address).toEqual([{ line: ["12 St James's Square"], city: "London", postalCode: "SW1Y 4JH", country: "GB" }]);
    expect(p.communication?.[0]?.language.coding?.[0]?.code).toBe("en-GB");
  });

  it("Condition: codes, status, stage, dates; one entered in error is left out", () => {
    const c = one<Condition>("Condition");
    expect(c.code).toEqual({ coding: [{ system: "http://snomed.info/sct", code: "44054006" }, { system: "http://hl7.org/fhir/sid/icd-10", code: "E11.9" }], text: "Type 2 diabetes mellitus" });
    expect(c).toMatchObject({ clinicalStatus: { coding: [{ code: "active" }] }, onsetDateTime: "2019-04-01", recordedDate: "2026-01-06", stage: [{ summary: { text: "uncomplicated" } }] });
    expect(c.extension).toEqual([{ url: "http://hl7.org/fhir/StructureDefinition/condition-assertedDate", valueDateTime: "2019-05-02T10:00:00Z" }]);
  });

  it("AllergyIntolerance: allergen, category, criticality, reactions, recorded date", () => {
    const a = one<AllergyIntolerance>("AllergyIntolerance");
    expect(a).toMatchObject({
      code: { coding: [{ code: "91936005" }], text: "Penicillin" }, category: ["medication"], criticality: "high", recordedDate: "2020-02-01",
      reaction: [{ manifestation: [{ text: "hives" }, { text: "wheezing" }] }], clinicalStatus: { coding: [{ code: "active" }] },
    });
  });

  it("MedicationStatement: drug codes, dosage, schedule, start, prescriber, class", () => {
    const m = one<MedicationStatement>("MedicationStatement");
    expect(m.medicationCodeableConcept).toEqual({ coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "860975" }, { system: "http://hl7.org/fhir/sid/ndc", code: "0093-1048-01" }], text: "Metformin" });
    expect(m.dosage).toEqual([{ text: "500 mg tablet oral BID", timing: { code: { text: "BID" }, repeat: { timeOfDay: ["08:00:00", "20:00:00"] } }, route: { text: "oral" }, doseAndRate: [{ doseQuantity: { value: 500, unit: "mg" } }] }]);
    expect(m).toMatchObject({ status: "active", effectivePeriod: { start: "2019-05-02" }, informationSource: { display: "Dr. Grace Hopper", identifier: { value: "1234567893" } }, note: [{ text: "Therapeutic class: biguanide" }] });
  });

  it("Immunization and Procedure: codes, dates and the details sent", () => {
    expect(one<Immunization>("Immunization")).toMatchObject({
      status: "completed", vaccineCode: { coding: [{ system: "http://hl7.org/fhir/sid/cvx", code: "141" }], text: "Influenza, seasonal, injectable" },
      occurrenceDateTime: "2025-10-15", lotNumber: "FL-2025-77", manufacturer: { display: "Seqirus" }, site: { text: "left_deltoid" }, route: { text: "intramuscular" },
      protocolApplied: [{ doseNumberPositiveInt: 1 }],
    });
    expect(one<Procedure>("Procedure")).toMatchObject({
      status: "completed", code: { coding: [{ system: "http://www.ama-assn.org/go/cpt", code: "45378" }], text: "Colonoscopy" }, performedDateTime: "2025-11-20",
      bodySite: [{ text: "colon" }], outcome: { text: "No polyps" }, reasonCode: [{ text: "Screening" }],
    });
  });

  it("lab Observations: one per value, LOINC, quantity, reference range, interpretation, status", () => {
    const labs = ofType<Observation>("Observation").filter((o) => o.category?.[0]?.coding?.[0]?.code === "laboratory");
    expect(labs.map((o) => [o.effectiveDateTime, o.valueQuantity?.value, o.interpretation?.[0]?.coding?.[0]?.code, o.status])).toEqual([
      ["2026-01-10T07:00:00.000Z", 7.4, "H", "final"], ["2026-02-10T07:00:00.000Z", 6.9, "H", "preliminary"],
    ]);
    expect(labs[0]).toMatchObject({ code: { coding: [{ system: "http://loinc.org", code: "4548-4" }], text: "Hemoglobin A1c" }, valueQuantity: { unit: "%" }, referenceRange: [{ low: { value: 4, unit: "%" }, high: { value: 5.6, unit: "%" } }], specimen: { display: "blood" } });
  });

  it("vital-sign Observations: blood pressure as a panel with components, the others by LOINC in UCUM", () => {
    const vitals = ofType<Observation>("Observation").filter((o) => o.category?.[0]?.coding?.[0]?.code === "vital-signs");
    const byCode = Object.fromEntries(vitals.map((o) => [o.code.coding![0]!.code, o]));
    expect(Object.keys(byCode).sort()).toEqual(["29463-7", "39156-5", "85354-9", "8867-4"]);
    expect(byCode["85354-9"]!.component!.map((c: NonNullable<Observation["component"]>[number]) => [c.code.coding![0]!.code, c.valueQuantity!.value, c.valueQuantity!.code])).toEqual([["8480-6", 132, "mm[Hg]"], ["8462-4", 84, "mm[Hg]"]]);
    expect(byCode["8867-4"]!.valueQuantity).toEqual({ value: 71, unit: "/min", system: "http://unitsofmeasure.org", code: "/min" });
    expect(byCode["29463-7"]!.valueQuantity!.value).toBe(68.2);
    expect(byCode["39156-5"]!.valueQuantity!.value).toBe(24.1);
  });
});
