/** Lab tests first seen, corrected results, and abnormal or critical results, between two states, each with the previous value. */
import { currentValues, isCorrection, type LabResult, type LabValue } from "../modules/lab_results/index.js";
import type { PatientState } from "../patient-state.js";
import { doc, measured } from "../views/lib.js";
import { replacementWord } from "../views/labs.js";
import { labReferenceText } from "../findings.js";
import { inWindow, type ChangeItem, type ChangeWindow } from "./types.js";

const keyOf = (r: LabResult) => (r.loinc_code ?? r.test_name ?? "").toLowerCase();
const CRITICAL = new Set(["HH", "LL"]);
const isAbnormal = (v: LabValue) => v.abnormal_flag !== null && v.abnormal_flag !== "N";
const valueText = (v: LabValue) => `${v.value_numeric !== null ? measured(v.value_numeric) : (v.value_string ?? "?")}${v.unit ? ` ${v.unit}` : ""}`;
const flagText = (v: LabValue, always: boolean) => (isAbnormal(v) || (always && v.abnormal_flag !== null) ? ` flag ${v.abnormal_flag}` : "");
const point = (v: LabValue) => ({ value_numeric: v.value_numeric, value_string: v.value_string, unit: v.unit, abnormal_flag: v.abnormal_flag, at: v.timestamp, log_id: v.log_id });

/** Whether a value came in the window: by the time its log reported it, not its draw's (a late result is news). */
const reportedIn = (v: LabValue, w: ChangeWindow) => inWindow(v.reported_at, w);

/**
 * Every result reported in the window, as it stands (a result replaced by a later one of the same
 * test and collection time is not one), that is a test's first (new_test), replaces another
 * with a different value or flag (corrected, else updated: e.g. final after preliminary), or
 * is abnormal (abnormal, critical for HH/LL, which goes first), with the result before it
 * ("previous"); normal results of known tests are not changes to report.
 */
export function labChanges(before: PatientState, after: PatientState, w: ChangeWindow): ChangeItem[] {
  const known = new Set((doc(before, "lab_results")?.results ?? []).map(keyOf));
  const out: ChangeItem[] = [];
  for (const r of doc(after, "lab_results")?.results ?? []) {
    const name = `${r.test_name ?? r.loinc_code ?? "lab"}${r.loinc_code ? ` (LOINC ${r.loinc_code})` : ""}`;
    const values = currentValues(r.history);
    values.forEach(({ v, replaced }, i) => {
      if (!reportedIn(v, w)) return;
      const prev = i > 0 ? values[i - 1]!.v : undefined;
      const first = !known.has(keyOf(r)) && !values.slice(0, i).some((x) => reportedIn(x.v, w));
      const was = replaced !== undefined && isCorrection(v, replaced) ? replaced : undefined;
      if (!first && !was && !isAbnormal(v)) return;
      const kind = v.abnormal_flag !== null && CRITICAL.has(v.abnormal_flag) ? "critical"
        : was ? (v.result_status === "corrected" ? "corrected" : "updated") : isAbnormal(v) ? "abnormal" : "new_test";
      const now = `${valueText(v)}${flagText(v, was !== undefined)}`;
      const value = was ? `${replacementWord(v)}: ${valueText(was)}${flagText(was, true)} → ${now}` : now;
      const previous = prev ? `; previous ${valueText(prev)} on ${prev.timestamp.slice(0, 10)}` : first ? "; first result of this test" : "";
      out.push({
        kind,
        what: `${name}: ${value}${labReferenceText(r, v)}${previous}`,
        at: v.timestamp,
        log_ids: [v.log_id, ...(was ? [was.log_id] : []), ...(prev ? [prev.log_id] : [])],
        ...(was ? { before: point(was) } : prev ? { before: point(prev) } : {}),
        after: point(v),
      });
    });
  }
  return out;
}
