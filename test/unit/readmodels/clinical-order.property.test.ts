import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { renderView } from "../../../readmodels/views/index.js";
import { given } from "./given.js";

// Few distinct instants, so ties (on the event time and on the collection time) are common.
const instant = fc.integer({ min: 0, max: 5 }).map((h) => `2025-03-0${1 + (h % 2)}T${String(h * 3).padStart(2, "0")}:00:00.000Z`);
const leaf = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(null));
const ext = fc.dictionary(fc.constantFrom("a", "b"), fc.oneof(leaf, fc.dictionary(fc.constantFrom("c", "d"), leaf, { maxKeys: 2 })), { maxKeys: 2 });
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/** Sparse lab results: descriptive fields, ranges, flags and extensions each present or not. */
const labResult = fc.record({
  loinc_code: opt(fc.constant("718-7")), test_name: opt(fc.constantFrom("Hemoglobin", "hemoglobin ", "Hgb")),
  specimen_type: opt(fc.constantFrom("blood", "serum")), test_category: opt(fc.constant("hematology")),
  value_numeric: fc.integer({ min: 8, max: 18 }), unit: fc.constantFrom("g/dL", "g/L"),
  abnormal_flag: opt(fc.constantFrom("H", "L", "N", "LL")), reference_range_low: opt(fc.constantFrom(11, 12)),
  reference_range_high: opt(fc.constantFrom(15, 16)), result_status: opt(fc.constantFrom("final", "preliminary")), extensions: opt(ext),
}, { requiredKeys: ["value_numeric", "unit"] }).map((r) => (r.loinc_code || r.test_name ? r : { ...r, test_name: "Hemoglobin" }));

const payloads: [LogType, fc.Arbitrary<Record<string, unknown>>][] = [
  ["lab_results", fc.record({ collection_datetime: opt(instant), source: opt(fc.constantFrom("lab", "ehr")), extensions: opt(ext), results: fc.array(labResult, { minLength: 1, maxLength: 2 }) }, { requiredKeys: ["results"] })],
  ["health_metric", fc.record({ metric_type: fc.constantFrom("energy", "Energy"), score: fc.integer({ min: 0, max: 10 }), scale_min: fc.constant(0), scale_max: fc.constant(10), extensions: opt(ext) }, { requiredKeys: ["metric_type", "score", "scale_min", "scale_max"] })],
  ["genomic_variant", fc.record({ extensions: opt(ext), variants: fc.array(fc.record({ gene: fc.constantFrom("BRCA1", "brca1"), variant_designation: fc.constant("c.1A>G"), classification: fc.constantFrom("VUS", "pathogenic"), extensions: opt(ext) }, { requiredKeys: ["gene"] }), { minLength: 1, maxLength: 2 }) }, { requiredKeys: ["variants"] })],
  ["clinical_measurement", fc.record({ extensions: opt(ext), measurements: fc.array(fc.record({ measurement_type: fc.constantFrom("lvef", "LVEF"), value_numeric: fc.integer({ min: 30, max: 60 }), measured_at: opt(instant) }, { requiredKeys: ["measurement_type"] }), { minLength: 1, maxLength: 2 }) }, { requiredKeys: ["measurements"] })],
  ["functional_class", fc.record({ instrument: fc.constantFrom("ecog", "ECOG"), class: fc.integer({ min: 0, max: 4 }), extensions: opt(ext) }, { requiredKeys: ["instrument", "class"] })],
];

const logsArb = fc
  .array(fc.constantFrom(...payloads).chain(([type, p]) => fc.record({ type: fc.constant(type), timestamp: instant, payload: p })), { maxLength: 16 })
  .map((xs) => xs.map((x, i): LogRecord => ({
    id: `log_${String(i).padStart(4, "0")}`, log_type: x.type, organization_id: "o", project_id: "p", patient_id: "pat_1",
    timestamp: x.timestamp, ingested_at: x.timestamp, payload: x.payload,
  })))
  .chain((logs) => fc.tuple(fc.constant(logs), fc.shuffledSubarray(logs, { minLength: logs.length, maxLength: logs.length })));

describe("lab descriptors, derived flags and merged extensions", () => {
  it("give byte-identical state and labs view for any arrival order", () => {
    fc.assert(
      fc.property(logsArb, ([logs, shuffled]) => {
        const a = given(shuffled);
        const b = given(logs);
        expect(JSON.stringify(a)).toBe(JSON.stringify(b));
        expect(renderView("labs_snapshot", a)).toEqual(renderView("labs_snapshot", b));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });
});
