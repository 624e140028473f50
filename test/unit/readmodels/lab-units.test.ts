import { describe, expect, it } from "vitest";
import { clinicalChanges } from "../../../readmodels/changes/index.js";
import { renderView } from "../../../readmodels/views/index.js";
import { abnormalLabs } from "../../../app/mcp/prompts/alert-findings.js";
import { labObservations } from "../../../fhir/outbound/labs.js";
import { emptyPatientState } from "../../../readmodels/patient-state.js";
import { blockOf } from "../views/fixtures.js";
import { given, log, payload } from "./given.js";

/** One Glucose result (no LOINC code) collected at midnight UTC of `day` in November 2026. */
const glucose = (day: number, result: Record<string, unknown>) => log("lab_results", `2026-11-${day}T09:00:00.000Z`, {
  collection_datetime: `2026-11-${day}T00:00:00Z`, results: [{ test_name: "Glucose", ...result }],
});
const mgdl = glucose(20, { value_numeric: 90, unit: "mg/dL", reference_range_low: 70, reference_range_high: 99 });
const mmol = glucose(24, { value_numeric: 5.0, unit: "mmol/L", reference_range_low: 3.9, reference_range_high: 5.5 });
const bare = glucose(26, { value_numeric: 85, unit: " MG/DL" });
const WINDOW = { since: "2026-11-19T00:00:00.000Z", until: "2026-11-27T00:00:00.000Z" };

describe("lab_results: a range applies only to values in its unit", () => {
  it("judges a result without flag or range against the range given in its own unit, not the latest range in another", () => {
    for (const order of [[mgdl, mmol, bare], [bare, mmol, mgdl]]) {
      const d = payload(given(order), "lab_results");
      const [g] = d.results;
      expect(g?.latest).toMatchObject({ value_numeric: 85, unit: " MG/DL", abnormal_flag: "N", flag_source: "test_range" });
      // The test shows the range of its unit (that of the latest value), never the mmol/L one beside mg/dL.
      expect(g).toMatchObject({ unit: " MG/DL", reference_range_low: 70, reference_range_high: 99 });
      expect(g?.other_unit_ranges).toEqual([{ unit: "mmol/L", low: 3.9, high: 5.5 }]);
      expect(d.abnormal).toEqual([]);
    }
  });

  it("derives no flag, and shows no range, when no range was given in the value's unit", () => {
    const d = payload(given([mmol, bare]), "lab_results");
    const [g] = d.results;
    expect(g?.latest).toMatchObject({ value_numeric: 85, abnormal_flag: null, flag_source: "test_range" });
    expect(g).toMatchObject({ reference_range_low: null, reference_range_high: null });
    expect(d.abnormal).toEqual([]);
    const v = renderView("labs_snapshot", given([mmol, bare]));
    expect(blockOf(v, "latest_results").text).toBe("- **Glucose**: 85 MG/DL on 2026-11-26");
    expect(blockOf(v, "latest_results").data).toEqual([expect.objectContaining({ reference_range_low: null, reference_range_high: null })]);
  });

  it("re-judges a value when a range in its unit arrives later, and leaves values in other units alone", () => {
    const h = payload(given([bare, mmol]), "lab_results").results[0]!.history;
    expect(h.map((x) => [x.value_numeric, x.abnormal_flag])).toEqual([[5, "N"], [85, null]]);
    const late = glucose(25, { value_numeric: 120, unit: "mg/dl", reference_range_low: 90, reference_range_high: 99 });
    const again = payload(given([bare, mmol, late]), "lab_results").results[0]!.history;
    expect(again.map((x) => [x.value_numeric, x.abnormal_flag])).toEqual([[5, "N"], [120, "H"], [85, "L"]]);
  });

  it("the labs view, the changes, the provider alert and FHIR put beside each value the range of its own unit", () => {
    const s = given([mgdl, mmol, bare]);
    const v = renderView("labs_snapshot", s);
    expect(blockOf(v, "latest_results").text).toBe("- **Glucose**: 85 MG/DL on 2026-11-26; ref 70–99");
    expect(v.blocks.map((b) => b.id)).not.toContain("abnormal_results");
    const c = clinicalChanges(emptyPatientState("pat_1", "UTC"), s, WINDOW, []);
    expect(c.labs.map((x) => x.what)).toEqual(["Glucose: 90 mg/dL, reference 70–99; first result of this test"]);
    const high = glucose(26, { value_numeric: 6.1, unit: "mmol/l" });
    const withHigh = given([mgdl, mmol, high]);
    expect(clinicalChanges(emptyPatientState("pat_1", "UTC"), withHigh, WINDOW, []).labs.map((x) => x.what)[0])
      .toBe("Glucose: 6.1 mmol/l flag H, reference 3.9–5.5; previous 5 mmol/L on 2026-11-24");
    expect(abnormalLabs(withHigh, WINDOW.since).map((f) => f.line)).toEqual(["Glucose: 6.1 mmol/l flag H, reference 3.9–5.5"]);
    const obs = labObservations({ state: s, patient: { id: "pat_1" } } as unknown as Parameters<typeof labObservations>[0]);
    expect(obs.map((o) => o.resource.referenceRange?.[0]?.high)).toEqual([{ value: 99, unit: "mg/dL" }, { value: 5.5, unit: "mmol/L" }, { value: 99, unit: " MG/DL" }]);
  });
});
