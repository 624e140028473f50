/** labs_snapshot: latest result per test, abnormal and critical values, the week's results. */
import { currentValues, isCorrection, unitKey, type AbnormalResult, type LabResult, type LabValue } from "../modules/lab_results/index.js";
import { cmpTime } from "../lib/time.js";
import type { PatientState } from "../patient-state.js";
import { block, clean, cmp, refs, day, doc, inWeek, measured, signed } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

const testName = (r: { test_name: string | null; loinc_code: string | null }) => clean(r.test_name ?? r.loinc_code ?? "unnamed test", 80);

/** A value for display, with its unit. */
function valueText(v: Pick<LabValue, "value_numeric" | "value_string">, unit: string | null): string {
  const val = v.value_numeric !== null ? measured(v.value_numeric, 3) : clean(v.value_string ?? "?", 60);
  return unit !== null && unit.trim() !== "" && v.value_numeric !== null ? `${val} ${clean(unit, 30)}` : val;
}

const flagText = (f: string | null) => (f !== null && f !== "N" ? ` [${f}]` : "");

function range(r: LabResult): string {
  const lo = r.reference_range_low;
  const hi = r.reference_range_high;
  if (lo === null && hi === null) return "";
  return `; ref ${lo === null ? `≤ ${measured(hi, 3)}` : hi === null ? `≥ ${measured(lo, 3)}` : `${measured(lo, 3)}–${measured(hi, 3)}`}`;
}

function latestLine(r: LabResult, w: Window): string {
  const code = r.loinc_code !== null && r.test_name !== null ? ` (${clean(r.loinc_code, 20)})` : "";
  return `**${testName(r)}**${code}: ${valueText(r.latest, r.unit)}${flagText(r.latest.abnormal_flag)} on ${day(r.latest.timestamp, w.tz)}${range(r)}`;
}

function abnormalLine(a: AbnormalResult, w: Window): string {
  const crit = a.critical ? " (critical)" : "";
  return `**${testName(a)}**: ${valueText(a, a.unit)} [${a.abnormal_flag}]${crit} on ${day(a.timestamp, w.tz)}`;
}

/** What a result that replaces another of the same draw calls itself: its status (corrected, final…), else re-reported. */
export const replacementWord = (v: LabValue): string => clean(v.result_status ?? "re-reported", 20);

/** A week's result as it stands, the one of its draw it replaced (when it says something else), and the one before it. */
interface WeekValue { r: LabResult; v: LabValue; was: LabValue | undefined; prev: LabValue | undefined }

/** Whether two results were reported in different units (both given and not alike): their difference means nothing. */
const otherUnit = (a: LabValue, b: LabValue) => a.unit !== null && b.unit !== null && unitKey(a.unit) !== unitKey(b.unit);

/** The numeric change between two results of one test; null when either is not a number or their units differ. */
function change(v: LabValue, prev: LabValue | undefined): number | null {
  if (!prev || v.value_numeric === null || prev.value_numeric === null || otherUnit(v, prev)) return null;
  return v.value_numeric - prev.value_numeric;
}

function weekLine({ r, v, was, prev }: WeekValue, w: Window): string {
  let vs = was ? `, ${replacementWord(v)} (was ${valueText(was, was.unit)}${flagText(was.abnormal_flag)})` : "";
  if (prev) {
    const d = change(v, prev);
    const tail = d !== null ? ` (${signed(d, 3)})` : otherUnit(v, prev) ? ", in another unit" : "";
    vs += `, previous ${valueText(prev, prev.unit)}${flagText(prev.abnormal_flag)} on ${day(prev.timestamp, w.tz)}${tail}`;
  }
  return `${day(v.timestamp, w.tz)} **${testName(r)}**: ${valueText(v, v.unit)}${flagText(v.abnormal_flag)}${vs}`;
}

const abnormalData = (a: AbnormalResult) => ({
  test_name: a.test_name, loinc_code: a.loinc_code, value_numeric: a.value_numeric, value_string: a.value_string, unit: a.unit,
  abnormal_flag: a.abnormal_flag, critical: a.critical, timestamp: a.timestamp,
});

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "lab_results");
  const results = d?.results ?? [];
  const abnormal = [...(d?.abnormal ?? [])].sort((a, b) => Number(b.critical) - Number(a.critical));
  const critical = abnormal.filter((a) => a.critical);
  const week: WeekValue[] = results
    .flatMap((r) => currentValues(r.history).map(({ v, replaced }, i, all) =>
      ({ r, v, was: replaced && isCorrection(v, replaced) ? replaced : undefined, prev: all[i - 1]?.v })))
    .filter((x) => inWeek(w, x.v.timestamp))
    .sort((a, b) => cmpTime(b.v.timestamp, a.v.timestamp) || cmp(b.v.log_id, a.v.log_id));
  return [
    ...block("latest_results", "Latest results", "long_term", results.map((r) => latestLine(r, w)), results.map((r) => r.latest.log_id),
      results.map((r) => ({
        test_name: r.test_name, loinc_code: r.loinc_code, test_category: r.test_category, ...r.latest, unit: r.latest.unit ?? r.unit,
        reference_range_low: r.reference_range_low, reference_range_high: r.reference_range_high, result_status: r.result_status,
      }))),
    ...block("abnormal_results", "Abnormal results (critical first)", "long_term",
      abnormal.map((a) => abnormalLine(a, w)), abnormal.map((a) => a.log_id), abnormal.map(abnormalData)),
    ...block("week_results", "Results in the last 7 days", "week", week.map((x) => weekLine(x, w)), refs(...week.flatMap((x) => [x.v.log_id, x.was?.log_id, x.prev?.log_id])),
      week.map(({ r, v, was, prev }) => ({
        test_name: r.test_name, loinc_code: r.loinc_code, ...v,
        replaced: was ?? null,
        previous: prev ?? null,
        change: change(v, prev),
      }))),
    ...block("critical_values", "Critical values", "temp", critical.map((a) => abnormalLine(a, w)), critical.map((a) => a.log_id), critical.map(abnormalData)),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  return (doc(state, "lab_results")?.results ?? []).flatMap((r) =>
    r.history.map((v) => ({
      timestamp: v.timestamp, module_type: "lab_results" as const, kind: "lab_results",
      summary: `${testName(r)} ${valueText(v, v.unit)}${flagText(v.abnormal_flag)}`, log_id: v.log_id,
    })));
}

export const labsSnapshot: ViewDef = { type: "labs_snapshot", title: "Labs snapshot", inputs: ["lab_results"], blocks, entries };
