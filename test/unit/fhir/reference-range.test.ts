import { describe, expect, it } from "vitest";
import type { Observation, ObservationReferenceRange, Patient } from "@medplum/fhirtypes";
import { derived, refused } from "./derive-helpers.js";
import { folded } from "./fold-helpers.js";

const UCUM = "http://unitsofmeasure.org";
const q = (value: number, code: string) => ({ value, unit: code, system: UCUM, code });
const lab = (loinc: string, value: number, unit: string, referenceRange: ObservationReferenceRange[], extra: Partial<Observation> = {}): Observation => ({
  resourceType: "Observation", id: `o-${loinc}`, status: "final",
  category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "laboratory" }] }],
  code: { coding: [{ system: "http://loinc.org", code: loinc }] }, effectiveDateTime: "2026-11-20T08:00:00-05:00",
  valueQuantity: q(value, unit), referenceRange, ...extra,
});
/** The result's range fields as logged, and the flag the lab module gives the value. */
function kept(o: Observation, ...others: Patient[]) {
  const logs = derived(o, ...others);
  const r = (logs[0]!.payload.results as Record<string, unknown>[])[0]!;
  const fields = Object.fromEntries(Object.entries(r).filter(([k]) => k.startsWith("reference_range")));
  return { fields, flag: folded("lab_results", logs).results[0]!.latest.abnormal_flag };
}
const ageRange = (low: number | undefined, high: number | undefined, lo: number, hi: number): ObservationReferenceRange => ({
  low: q(lo, "g/dL"), high: q(hi, "g/dL"),
  age: { ...(low !== undefined ? { low: { value: low, unit: "a", system: UCUM, code: "a" } } : {}), ...(high !== undefined ? { high: { value: high, unit: "a", system: UCUM, code: "a" } } : {}) },
});
const patient = (birthDate: string): Patient => ({ resourceType: "Patient", id: "p1", birthDate });

describe("lab Observation in: the reference range", () => {
  it("never applies a range in a molar unit to a value in a mass unit: it is kept as text with its unit, and the value is not flagged", () => {
    const glucose = lab("2345-7", 100, "mg/dL", [{ low: { value: 3.9, code: "mmol/L" }, high: { value: 5.6, code: "mmol/L" } }]);
    expect(kept(glucose)).toEqual({ fields: { reference_range: "3.9-5.6 mmol/L" }, flag: null });
  });

  it("converts a range whose unit differs from the value's only by scale (g/L to g/dL, 10*9/L to 10*3/uL)", () => {
    expect(kept(lab("718-7", 13.2, "g/dL", [{ low: q(120, "g/L"), high: q(160, "g/L") }]))).toEqual({ fields: { reference_range_low: 12, reference_range_high: 16 }, flag: "N" });
    expect(kept(lab("6690-2", 3.1, "10*3/uL", [{ low: q(4, "10*9/L"), high: q(11, "10*9/L") }]))).toEqual({ fields: { reference_range_low: 4, reference_range_high: 11 }, flag: "L" });
    // A bound without a unit is in the value's, as labs send it.
    expect(kept(lab("718-7", 17, "g/dL", [{ low: { value: 12 }, high: { value: 16 } }])).flag).toBe("H");
  });

  it("picks the range for the patient's age when a Patient of the Bundle gives the birth date, else one without an age, else none", () => {
    const child = ageRange(1, 17, 11, 13.5);
    const adult = ageRange(18, undefined, 12, 16);
    const subject = { subject: { reference: "Patient/p1" } };
    expect(kept(lab("718-7", 13, "g/dL", [child, adult], subject), patient("1980-01-01")).fields).toEqual({ reference_range_low: 12, reference_range_high: 16 });
    expect(kept(lab("718-7", 13, "g/dL", [adult, child], subject), patient("2010-11-21")).fields).toEqual({ reference_range_low: 11, reference_range_high: 13.5 });
    // Turning 18 on the day of the draw is adult.
    expect(kept(lab("718-7", 13, "g/dL", [child, adult], subject), patient("2008-11-20")).fields).toEqual({ reference_range_low: 12, reference_range_high: 16 });
    const general = { low: q(11.5, "g/dL"), high: q(16, "g/dL") };
    expect(kept(lab("718-7", 13, "g/dL", [child, general, adult])).fields).toEqual({ reference_range_low: 11.5, reference_range_high: 16 });
    expect(kept(lab("718-7", 13, "g/dL", [child, adult])).fields).toEqual({});
  });

  it("takes no range for a population it cannot tell (appliesTo), a therapeutic range, or two ranges that differ", () => {
    const female = { ...ageRange(undefined, undefined, 12, 15.5), age: undefined, appliesTo: [{ coding: [{ system: "http://snomed.info/sct", code: "248152002" }] }] };
    const therapeutic = { low: q(2, "g/dL"), high: q(3, "g/dL"), type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/referencerange-meaning", code: "therapeutic" }] } };
    expect(kept(lab("718-7", 13, "g/dL", [female, therapeutic])).fields).toEqual({});
    expect(kept(lab("718-7", 13, "g/dL", [therapeutic, { low: q(12, "g/dL"), high: q(16, "g/dL") }])).fields).toEqual({ reference_range_low: 12, reference_range_high: 16 });
    expect(kept(lab("718-7", 13, "g/dL", [{ low: q(12, "g/dL") }, { low: q(11, "g/dL") }])).fields).toEqual({});
  });

  it("keeps a range given only as text as the hosted SDK sends it: a bare low-high reads as bounds in the value's unit", () => {
    expect(kept(lab("2823-3", 5.4, "mmol/L", [{ text: "3.5-5.1" }]))).toEqual({ fields: { reference_range: "3.5-5.1" }, flag: "H" });
    expect(kept(lab("2823-3", 5.4, "mmol/L", [{ text: "3.5-5.1 mmol/L" }]))).toEqual({ fields: { reference_range: "3.5-5.1 mmol/L" }, flag: null });
  });

  it("refuses inverted bounds at the range that has them", () => {
    const out = refused(lab("718-7", 13, "g/dL", [{ ...ageRange(1, 17, 11, 13.5) }, { low: q(16, "g/dL"), high: q(12, "g/dL") }]));
    expect(out.issues).toEqual([expect.objectContaining({ path: ["referenceRange", 1, "high"], message: "12 is below the range's low 16" })]);
  });
});
