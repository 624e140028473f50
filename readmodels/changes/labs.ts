/** Lab tests first seen, and abnormal or critical results, between two states, each with the previous value. */
import type { LabResult, LabValue } from "../modules/lab_results/index.js";
import type { PatientState } from "../patient-state.js";
import { doc, measured } from "../views/lib.js";
import { labReferenceText } from "../findings.js";
import { inWindow, type ChangeItem, type ChangeWindow } from "./types.js";

const keyOf = (r: LabResult) => (r.loinc_code ?? r.test_name ?? "").toLowerCase();
const CRITICAL = new Set(["HH", "LL"]);
const isAbnormal = (v: LabValue) => v.abnormal_flag !== null && v.abnormal_flag !== "N";
const valueText = (v: LabValue) => `${v.value_numeric !== null ? measured(v.value_numeric) : (v.value_string ?? "?")}${v.unit ? ` ${v.unit}` : ""}`;
const point = (v: LabValue) => ({ value_numeric: v.value_numeric, value_string: v.value_string, unit: v.unit, abnormal_flag: v.abnormal_flag, at: v.timestamp, log_id: v.log_id });

/**
 * Every result in the window that is a test's first (new_test) or abnormal (abnormal,
 * critical for HH/LL), with the result before it ("previous"); normal results of known
 * tests are not changes to report.
 */
export function labChanges(before: PatientState, after: PatientState, w: ChangeWindow): ChangeItem[] {
  const known = new Set((doc(before, "lab_results")?.results ?? []).map(keyOf));
  const out: ChangeItem[] = [];
  for (const r of doc(after, "lab_results")?.results ?? []) {
    const name = r.test_name ?? r.loinc_code ?? "lab";
    r.history.forEach((v, i) => {
      if (!inWindow(v.timestamp, w)) return;
      const prev = i > 0 ? r.history[i - 1] : undefined;
      const first = !known.has(keyOf(r)) && !r.history.slice(0, i).some((x) => inWindow(x.timestamp, w));
      if (!first && !isAbnormal(v)) return;
      const kind = v.abnormal_flag !== null && CRITICAL.has(v.abnormal_flag) ? "critical" : isAbnormal(v) ? "abnormal" : "new_test";
      const flag = isAbnormal(v) ? ` flag ${v.abnormal_flag}` : "";
      const previous = prev ? `; previous ${valueText(prev)} on ${prev.timestamp.slice(0, 10)}` : first ? "; first result of this test" : "";
      out.push({
        kind,
        what: `${name}${r.loinc_code ? ` (LOINC ${r.loinc_code})` : ""}: ${valueText(v)}${flag}${labReferenceText(r, v)}${previous}`,
        at: v.timestamp,
        log_ids: [v.log_id, ...(prev ? [prev.log_id] : [])],
        ...(prev ? { before: point(prev) } : {}),
        after: point(v),
      });
    });
  }
  return out;
}
