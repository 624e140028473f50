import { describe, expect, it } from "vitest";
import type { Observation } from "@medplum/fhirtypes";
import { validateFhir } from "../../../fhir/validate.js";
import { parseObservationQuery, searchBundle, summaryBundle, type ObservationFilter } from "../../../fhir/outbound/index.js";
import { dateRange } from "../../../fhir/outbound/search.js";
import { input } from "./outbound-fixture.js";

const filter = (q: Parameters<typeof parseObservationQuery>[0]): ObservationFilter => {
  const p = parseObservationQuery(q);
  if (!p.ok) throw new Error(p.message);
  return p.value;
};
const codes = (q: Parameters<typeof parseObservationQuery>[0]) =>
  searchBundle(input(), "Observation", { observation: filter(q) }).entry!.map((e) => `${(e.resource as Observation).code.coding![0]!.code}@${(e.resource as Observation).effectiveDateTime!.slice(0, 10)}`);

describe("searchsets of the patient's resources", () => {
  it("answer a valid searchset Bundle with the summary's ids, and Provenance when _revinclude asks", () => {
    const all = searchBundle(input(), "Observation");
    expect(validateFhir(all)).toEqual([]);
    expect(all).toMatchObject({ type: "searchset", total: 6 });
    const summary = summaryBundle(input(), { now: "2026-03-01T00:00:00Z" });
    const summaryUrls = new Set(summary.entry!.map((e) => e.fullUrl));
    expect(all.entry!.every((e) => summaryUrls.has(e.fullUrl) && e.search?.mode === "match")).toBe(true);
    const withProv = searchBundle(input(), "Condition", { provenance: true });
    expect(withProv.entry!.map((e) => [e.resource!.resourceType, e.search!.mode])).toEqual([["Condition", "match"], ["Provenance", "include"]]);
    expect(validateFhir(withProv)).toEqual([]);
    for (const t of ["AllergyIntolerance", "MedicationStatement", "Immunization", "Procedure"] as const) expect(searchBundle(input(), t).total, t).toBe(1);
  });

  it("filter Observations by code as system|code or code, comma meaning any of", () => {
    expect(codes({ code: "http://loinc.org|4548-4" })).toEqual(["4548-4@2026-01-10", "4548-4@2026-02-10"]);
    expect(codes({ code: "8867-4,29463-7" })).toEqual(["8867-4@2026-01-11", "29463-7@2026-01-12"]);
    expect(codes({ code: "http://snomed.info/sct|4548-4" })).toEqual([]);
    expect(codes({ code: "|4548-4" })).toEqual([]);
  });

  it("filter by category and by effective date with FHIR prefixes, repeated dates all holding", () => {
    expect(codes({ category: "vital-signs" })).toHaveLength(4);
    expect(codes({ category: "http://terminology.hl7.org/CodeSystem/observation-category|laboratory" })).toHaveLength(2);
    expect(codes({ code: "4548-4", date: "ge2026-02" })).toEqual(["4548-4@2026-02-10"]);
    expect(codes({ code: "4548-4", date: "lt2026-02-10" })).toEqual(["4548-4@2026-01-10"]);
    expect(codes({ code: "4548-4", date: "2026-01-10" })).toEqual(["4548-4@2026-01-10"]);
    expect(codes({ code: "4548-4", date: "ne2026-01-10" })).toEqual(["4548-4@2026-02-10"]);
    expect(codes({ date: ["ge2026-01-11", "le2026-01-11T23:59:59Z"] })).toEqual(["85354-9@2026-01-11", "8867-4@2026-01-11"]);
    expect(codes({ code: "4548-4", date: "gt2026-02-10T07:00:00Z" })).toEqual([]);
    expect(codes({ code: "4548-4", date: "ge2026-02-10T07:00:00Z" })).toEqual(["4548-4@2026-02-10"]);
  });

  it("refuse a date that is no FHIR date, naming the parameter", () => {
    expect(parseObservationQuery({ date: "xx2026-01-01" })).toMatchObject({ ok: false, param: "date" });
    expect(parseObservationQuery({ date: "2026-13" })).toMatchObject({ ok: false, param: "date" });
    expect(parseObservationQuery({ date: "2026-02-30" })).toMatchObject({ ok: false, param: "date" });
    expect(parseObservationQuery({ date: "ge\r\n" })).toMatchObject({ ok: false, param: "date" });
    expect(dateRange("2026")).toEqual({ lo: Date.UTC(2026, 0, 1), hi: Date.UTC(2027, 0, 1) });
    expect(dateRange("2026-03-01T10:00+01:00")).toEqual({ lo: Date.UTC(2026, 2, 1, 9), hi: Date.UTC(2026, 2, 1, 9, 1) });
  });
});
