import { describe, expect, it } from "vitest";
import { renderView } from "../../../readmodels/views/index.js";
import { at, given, log } from "../readmodels/given.js";
import { blockOf, labLogs, shape, vitalLogs } from "./fixtures.js";

describe("labs_snapshot", () => {
  const f = labLogs();
  const v = renderView("labs_snapshot", given(f.logs));

  it("renders latest, abnormal and the week's results, with critical values to follow up", () => {
    expect(shape(v)).toEqual([["latest_results", "long_term"], ["abnormal_results", "long_term"], ["week_results", "week"], ["critical_values", "temp"]]);
    expect(v.valid_from).toBe(at(20, 12));
  });

  it("shows the latest result of each test with its flag, unit and reference range", () => {
    const b = blockOf(v, "latest_results");
    expect(b.text.split("\n")).toEqual([
      "- **Hemoglobin** (718-7): 9.1 g/dL [L] on 2025-03-16",
      "- **Potassium** (2823-3): 6.9 mmol/L [HH] on 2025-03-16; ref 3.5–5.1",
      "- **Glucose** (2345-7): 60 mg/dL [L] on 2025-03-20; ref 70–99",
    ]);
    expect(b.refs).toEqual([f.week.id, f.glucose.id].sort());
  });

  it("lists abnormal results critical first", () => {
    expect((blockOf(v, "abnormal_results").data as { test_name: string }[]).map((a) => a.test_name)).toEqual(["Potassium", "Hemoglobin", "Glucose"]);
  });

  it("gives the week's results with the change against the previous value, leaving older results out", () => {
    const b = blockOf(v, "week_results");
    expect(b.text.split("\n")).toEqual([
      "- 2025-03-20 **Glucose**: 60 mg/dL [L]",
      "- 2025-03-16 **Hemoglobin**: 9.1 g/dL [L], previous 11 g/dL [L] on 2025-03-10 (-1.9)",
      "- 2025-03-16 **Potassium**: 6.9 mmol/L [HH], previous 4.1 mmol/L on 2025-03-01 (+2.8)",
    ]);
    expect(b.refs).toEqual([f.baseline.id, f.hbOld.id, f.week.id, f.glucose.id].sort());
  });

  it("lists critical (HH/LL) values as temp items", () => {
    expect(blockOf(v, "critical_values")).toMatchObject({ segment: "temp", refs: [f.week.id], text: "- **Potassium**: 6.9 mmol/L [HH] (critical) on 2025-03-16" });
  });

  it("shows each value in its own unit, and no change between values reported in different units", () => {
    const s = given([
      log("lab_results", at(10), { results: [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 95, unit: "g/L" }] }),
      log("lab_results", at(11), { results: [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 9.1, unit: "g/dL" }] }),
      log("lab_results", at(12), { results: [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 9.5, unit: "G/DL " }] }),
    ]);
    const week = blockOf(renderView("labs_snapshot", s), "week_results");
    expect(week.text.split("\n")).toEqual([
      "- 2025-03-12 **Hemoglobin**: 9.5 G/DL, previous 9.1 g/dL on 2025-03-11 (+0.4)",
      "- 2025-03-11 **Hemoglobin**: 9.1 g/dL, previous 95 g/L on 2025-03-10, in another unit",
      "- 2025-03-10 **Hemoglobin**: 95 g/L",
    ]);
    expect((week.data as { change: number | null }[]).map((x) => x.change === null ? null : Math.round(x.change * 10) / 10)).toEqual([0.4, null, null]);
  });

  it("keeps the significant digits of a small value and of its change, so a flagged result never reads as 0", () => {
    const s = given([
      log("lab_results", at(10), { results: [{ loinc_code: "10839-9", test_name: "Troponin I", value_numeric: 0.0003, unit: "ng/mL" }] }),
      log("lab_results", at(11), { results: [{ loinc_code: "10839-9", test_name: "Troponin I", value_numeric: 0.0004, unit: "ng/mL", abnormal_flag: "H", reference_range_high: 0.0001234 }] }),
    ]);
    const v = renderView("labs_snapshot", s);
    expect(blockOf(v, "latest_results").text).toBe("- **Troponin I** (10839-9): 0.0004 ng/mL [H] on 2025-03-11; ref ≤ 0.000123");
    expect(blockOf(v, "week_results").text.split("\n")).toEqual([
      "- 2025-03-11 **Troponin I**: 0.0004 ng/mL [H], previous 0.0003 ng/mL [H] on 2025-03-10 (+0.0001)",
      "- 2025-03-10 **Troponin I**: 0.0003 ng/mL [H]",
    ]);
  });

  it("flags a result sent without a flag against the range shown beside it, and lists it as abnormal", () => {
    const s = given([
      log("lab_results", at(10), { results: [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 13, unit: "g/dL", reference_range_low: 12, reference_range_high: 16 }] }),
      log("lab_results", at(11), { results: [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 9, unit: "g/dL" }] }),
    ]);
    const v = renderView("labs_snapshot", s);
    expect(blockOf(v, "latest_results").text).toBe("- **Hemoglobin** (718-7): 9 g/dL [L] on 2025-03-11; ref 12–16");
    expect(blockOf(v, "abnormal_results").text).toBe("- **Hemoglobin**: 9 g/dL [L] on 2025-03-11");
  });

  it("shows one test when a result naming it was collected before a later unnamed one, and finds it by that name", () => {
    const s = given([
      log("lab_results", at(10), { results: [{ loinc_code: "718-7", value_numeric: 11, unit: "g/dL" }] }),
      log("lab_results", at(11), { collection_datetime: at(9), results: [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 13, unit: "g/dL", reference_range_low: 12, reference_range_high: 16 }] }),
      log("lab_results", at(12), { results: [{ test_name: "Hemoglobin", value_numeric: 12.5, unit: "g/dL" }] }),
    ]);
    expect(blockOf(renderView("labs_snapshot", s), "latest_results").text).toBe("- **Hemoglobin** (718-7): 12.5 g/dL on 2025-03-12; ref 12–16");
  });
});

describe("vitals_snapshot", () => {
  const f = vitalLogs();
  const v = renderView("vitals_snapshot", given(f.logs));

  it("renders latest vitals, the week's summary and the weight trend", () => {
    expect(shape(v)).toEqual([["latest_vitals", "long_term"], ["week_summary", "week"], ["weight_trend", "week"]]);
    expect(v.temp).toEqual([]);
  });

  it("pairs blood pressure measured together and keeps the newest value of each measurement", () => {
    const b = blockOf(v, "latest_vitals");
    expect(b.text.split("\n")).toEqual([
      "- **Blood pressure**: 126/80 mmHg on 2025-03-17",
      "- **Heart rate**: 72 bpm on 2025-03-15",
      "- **SpO2**: 97% on 2025-03-15",
      "- **Weight**: 69.5 kg on 2025-03-20",
    ]);
    expect(b.refs).toEqual([f.clinic.id, f.home.id, f.w3.id].sort());
  });

  it("summarises the week as min/avg/max per measurement without older readings", () => {
    const b = blockOf(v, "week_summary");
    expect(b.text).toContain("- **Systolic BP**: min 126 / avg 128 / max 130 mmHg (2 readings)");
    expect(b.text).toContain("- **Weight**: min 69.5 / avg 70 / max 70.4 kg (3 readings)");
    expect(b.text).not.toContain("150");
    expect(b.refs).not.toContain(f.old.id);
    expect(b.refs).not.toContain(f.wOld.id);
  });

  it("shows the week's weight per day and its change", () => {
    const b = blockOf(v, "weight_trend");
    expect(b.text.split("\n")).toEqual(["- 2025-03-14: 70.4 kg", "- 2025-03-17: 70 kg", "- 2025-03-20: 69.5 kg", "- Change over the week: -0.9 kg (70.4 → 69.5 kg)"]);
    expect(b.refs).toEqual([f.w1.id, f.w2.id, f.w3.id]);
  });
});
