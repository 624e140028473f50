/** vitals_snapshot: latest vitals, the week's min/avg/max per measurement, the weight trend. */
import type { LatestValue } from "../modules/vitals/index.js";
import type { PatientState } from "../patient-state.js";
import { block, clean, cmp, day, dayInWeek, doc, fmt, inWeek, signed, spread } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

/** Display label and unit of the measurements the vitals module knows, in display order. */
const MEASURES: Record<string, [string, string]> = {
  systolic_bp_mmhg: ["Systolic BP", "mmHg"],
  diastolic_bp_mmhg: ["Diastolic BP", "mmHg"],
  heart_rate_bpm: ["Heart rate", "bpm"],
  spo2_percent: ["SpO2", "%"],
  temperature_celsius: ["Temperature", "°C"],
  respiratory_rate_bpm: ["Respiratory rate", "breaths/min"],
  weight_kg: ["Weight", "kg"],
  body_fat_percent: ["Body fat", "%"],
  bmi: ["BMI", "kg/m²"],
};
const ORDER = Object.keys(MEASURES);

const label = (k: string) => MEASURES[k]?.[0] ?? clean(k, 60);
const unit = (k: string) => (MEASURES[k] ? (MEASURES[k][1] === "%" ? "%" : ` ${MEASURES[k][1]}`) : "");
const byOrder = (a: string, b: string) => {
  const i = ORDER.indexOf(a);
  const j = ORDER.indexOf(b);
  return (i < 0 ? ORDER.length : i) - (j < 0 ? ORDER.length : j) || cmp(a, b);
};

function latestLines(latest: Record<string, LatestValue>, w: Window): string[] {
  const keys = Object.keys(latest).sort(byOrder);
  const sys = latest.systolic_bp_mmhg;
  const dia = latest.diastolic_bp_mmhg;
  // A blood pressure reads as one value when both halves come from the same measurement.
  const paired = sys !== undefined && dia !== undefined && sys.log_id === dia.log_id && sys.timestamp === dia.timestamp;
  const lines: string[] = [];
  for (const k of keys) {
    if (paired && k === "diastolic_bp_mmhg") continue;
    const v = latest[k]!;
    if (paired && k === "systolic_bp_mmhg") lines.push(`**Blood pressure**: ${fmt(sys.value, 0)}/${fmt(dia.value, 0)} mmHg on ${day(v.timestamp, w.tz)}`);
    else lines.push(`**${label(k)}**: ${fmt(v.value)}${unit(k)} on ${day(v.timestamp, w.tz)}`);
  }
  return lines;
}

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "vitals");
  if (!d) return [];
  const latest = d.latest;
  const wk = d.history.filter((h) => inWeek(w, h.timestamp));
  const series = new Map<string, number[]>();
  for (const h of wk) for (const [k, v] of Object.entries(h.measurements)) series.set(k, [...(series.get(k) ?? []), v]);
  const stats = [...series.entries()].sort((a, b) => byOrder(a[0], b[0])).flatMap(([k, vs]) => {
    const s = spread(vs);
    return s ? [{ measurement: k, ...s }] : [];
  });
  const weekLines = stats.map((s) => s.count === 1
    ? `**${label(s.measurement)}**: ${fmt(s.mean, 1)}${unit(s.measurement)} (1 reading)`
    : `**${label(s.measurement)}**: min ${fmt(s.min, 1)} / avg ${fmt(s.mean, 1)} / max ${fmt(s.max, 1)}${unit(s.measurement)} (${s.count} readings)`);
  const weights = d.daily_weight.filter((x) => dayInWeek(w, x.date) && x.weight_kg !== null);
  const weightLines = weights.map((x) => `${x.date}: ${fmt(x.weight_kg?.mean, 1)} kg${(x.weight_kg?.count ?? 0) > 1 ? ` (mean of ${x.weight_kg?.count})` : ""}`);
  const first = weights[0]?.weight_kg?.mean;
  const lastW = weights[weights.length - 1]?.weight_kg?.mean;
  const change = weights.length > 1 && first !== undefined && lastW !== undefined ? lastW - first : null;
  if (change !== null) weightLines.push(`Change over the week: ${signed(change, 1)} kg (${fmt(first, 1)} → ${fmt(lastW, 1)} kg)`);
  const weightIds = d.history.filter((h) => h.measurements.weight_kg !== undefined && dayInWeek(w, day(h.timestamp, w.tz))).map((h) => h.log_id);
  return [
    ...block("latest_vitals", "Latest vitals", "long_term", latestLines(latest, w), Object.values(latest).map((v) => v.log_id),
      Object.keys(latest).sort(byOrder).map((k) => ({ measurement: k, unit: MEASURES[k]?.[1] ?? null, ...latest[k] }))),
    ...block("week_summary", "Vitals in the last 7 days", "week", weekLines, wk.map((h) => h.log_id),
      stats.map((s) => ({ ...s, unit: MEASURES[s.measurement]?.[1] ?? null }))),
    ...block("weight_trend", "Weight trend (last 7 days)", "week", weightLines, weightIds,
      { days: weights.map((x) => ({ date: x.date, weight_kg: x.weight_kg })), change_kg: change }),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  return (doc(state, "vitals")?.history ?? []).map((h) => ({
    timestamp: h.timestamp, module_type: "vitals" as const, kind: h.log_type, log_id: h.log_id,
    summary: Object.keys(h.measurements).sort(byOrder).map((k) => `${label(k)} ${fmt(h.measurements[k])}${unit(k)}`).join(", "),
  }));
}

export const vitalsSnapshot: ViewDef = { type: "vitals_snapshot", title: "Vitals snapshot", inputs: ["vitals"], blocks, entries };
