import { describe, expect, it } from "vitest";
import { clinicalChanges } from "../../../readmodels/changes/index.js";
import { renderView } from "../../../readmodels/views/index.js";
import { abnormalLabs } from "../../../app/mcp/prompts/alert-findings.js";
import { emptyPatientState } from "../../../readmodels/patient-state.js";
import { blockOf } from "../views/fixtures.js";
import { given, log, payload } from "./given.js";

const DRAW = "2026-11-25T07:00:00Z";
const potassium = (t: string, result: Record<string, unknown>, collected = DRAW) =>
  log("lab_results", t, { collection_datetime: collected, results: [{ loinc_code: "2823-3", test_name: "Potassium", unit: "mmol/L", ...result }] });
const critical = potassium("2026-11-25T09:00:00.000Z", { value_numeric: 6.8, abnormal_flag: "HH" });
const corrected = potassium("2026-11-25T11:00:00.000Z", { value_numeric: 5.0, abnormal_flag: "N", result_status: "corrected" });
const WINDOW = { since: "2026-11-20T00:00:00.000Z", until: "2026-11-26T00:00:00.000Z" };
const empty = emptyPatientState("pat_1", "UTC");

describe("lab_results: a result replaced by a later one of the same test and collection time", () => {
  it("the module keeps both, the later as latest, and not abnormal", () => {
    const d = payload(given([critical, corrected]), "lab_results");
    expect(d.results[0]?.history.map((v) => [v.value_numeric, v.abnormal_flag, v.result_status])).toEqual([[6.8, "HH", null], [5, "N", "corrected"]]);
    expect(d.results[0]?.latest).toMatchObject({ value_numeric: 5, abnormal_flag: "N" });
    expect(d.abnormal).toEqual([]);
  });

  it("get_changes says the result was corrected, and no longer lists the replaced value as critical", () => {
    const c = clinicalChanges(empty, given([critical, corrected]), WINDOW, []);
    expect(c.labs).toEqual([expect.objectContaining({
      kind: "corrected",
      what: "Potassium (LOINC 2823-3): corrected: 6.8 mmol/L flag HH → 5 mmol/L flag N; first result of this test",
      log_ids: [corrected.id, critical.id],
      before: expect.objectContaining({ value_numeric: 6.8, abnormal_flag: "HH" }),
      after: expect.objectContaining({ value_numeric: 5, abnormal_flag: "N" }),
    })]);
    // The original in the state at the window's start: the correction alone is the change.
    const later = clinicalChanges(given([critical]), given([critical, corrected]), WINDOW, []);
    expect(later.labs.map((x) => [x.kind, x.what])).toEqual([["corrected", "Potassium (LOINC 2823-3): corrected: 6.8 mmol/L flag HH → 5 mmol/L flag N"]]);
  });

  it("a correction to another critical value stays critical; the same result sent again is no change", () => {
    const worse = potassium("2026-11-25T11:00:00.000Z", { value_numeric: 7.1, abnormal_flag: "HH", result_status: "corrected" });
    expect(clinicalChanges(given([critical]), given([critical, worse]), WINDOW, []).labs.map((x) => [x.kind, x.what]))
      .toEqual([["critical", "Potassium (LOINC 2823-3): corrected: 6.8 mmol/L flag HH → 7.1 mmol/L flag HH"]]);
    const normal = potassium("2026-11-25T09:00:00.000Z", { value_numeric: 4.1 });
    const again = potassium("2026-11-25T11:00:00.000Z", { value_numeric: 4.1 });
    expect(clinicalChanges(given([normal]), given([normal, again]), WINDOW, []).labs).toEqual([]);
    const final = potassium("2026-11-25T11:00:00.000Z", { value_numeric: 4.3, result_status: "final" });
    expect(clinicalChanges(given([normal]), given([normal, final]), WINDOW, []).labs.map((x) => [x.kind, x.what]))
      .toEqual([["updated", "Potassium (LOINC 2823-3): final: 4.1 mmol/L → 4.3 mmol/L"]]);
  });

  it("the labs view's week lists the corrected result once, saying what it replaced, and compares with the previous draw", () => {
    const earlier = potassium("2026-11-22T09:00:00.000Z", { value_numeric: 4.1 }, "2026-11-22T07:00:00Z");
    const s = given([earlier, critical, corrected]);
    const week = blockOf(renderView("labs_snapshot", s), "week_results");
    expect(week.text.split("\n")).toEqual([
      "- 2026-11-25 **Potassium**: 5 mmol/L, corrected (was 6.8 mmol/L [HH]), previous 4.1 mmol/L on 2026-11-22 (+0.9)",
      "- 2026-11-22 **Potassium**: 4.1 mmol/L",
    ]);
    expect(week.refs).toEqual([earlier.id, critical.id, corrected.id].sort());
    expect(renderView("labs_snapshot", s).blocks.map((b) => b.id)).toEqual(["latest_results", "week_results"]);
    expect(abnormalLabs(s, WINDOW.since)).toEqual([]);
  });

  it("a correction (or a late result) reported in the window for a draw before it is a change, and in the alert", () => {
    const next = { since: "2026-11-26T00:00:00.000Z", until: "2026-11-28T00:00:00.000Z" };
    const late = potassium("2026-11-27T10:00:00.000Z", { value_numeric: 5.0, abnormal_flag: "N", result_status: "corrected" });
    expect(clinicalChanges(given([critical]), given([critical, late]), next, [late]).labs.map((x) => [x.kind, x.what, x.log_ids]))
      .toEqual([["corrected", "Potassium (LOINC 2823-3): corrected: 6.8 mmol/L flag HH → 5 mmol/L flag N", [late.id, critical.id]]]);
    // Nothing new in the window: the draw's own result was reported before it.
    expect(clinicalChanges(given([critical]), given([critical]), next, []).labs).toEqual([]);
    const culture = log("lab_results", "2026-11-27T12:00:00.000Z", { collection_datetime: "2026-11-24T08:00:00Z", results: [{ test_name: "Blood culture", value_string: "Staphylococcus aureus", abnormal_flag: "HH" }] });
    expect(clinicalChanges(given([critical]), given([critical, culture]), next, [culture]).labs.map((x) => [x.kind, x.at]))
      .toEqual([["critical", "2026-11-24T08:00:00.000Z"]]);
    expect(abnormalLabs(given([critical, culture]), next.since).map((f) => f.line)).toEqual(["Blood culture: Staphylococcus aureus flag HH (CRITICAL)"]);
  });
});
