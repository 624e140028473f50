/** device_snapshot: wearable and CGM daily rollups for the week, latest readings, out-of-range values. */
import { cgmMetrics, CGM_THRESHOLDS, type GlucoseReading } from "../modules/glucose/index.js";
import type { HeartEntry } from "../modules/heart/index.js";
import type { PatientState } from "../patient-state.js";
import { addDays } from "../lib/time.js";
import { block, day, dayInWeek, doc, entry, fmt, measured, parts, spread } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

/** Thresholds of the temp segment. @default glucose < 70 or > 250 mg/dL, SpO2 < 90 % */
export const GLUCOSE_LOW = 70;
export const GLUCOSE_HIGH = 250;
export const SPO2_LOW = 90;

const int = (n: number) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const hm = (min: number) => `${Math.floor(Math.round(min) / 60)} h ${String(Math.round(min) % 60).padStart(2, "0")} min`;
const glucoseDay = (r: GlucoseReading, tz: string) => day(r.sensor_timestamp ?? r.timestamp, tz);
const spo2Of = (e: HeartEntry) => (typeof e.values.spo2_percent === "number" ? e.values.spo2_percent : null);
const avgLine = (label: string, values: number[], show: (n: number) => string) => {
  const s = spread(values);
  return s && s.count > 1 ? [`**${label}**: ${show(s.mean)} over ${s.count} days`] : [];
};

function heartBlock(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "heart");
  const days = (d?.days ?? []).filter((x) => dayInWeek(w, x.date));
  const lines = days.map((x) => {
    const ps = parts(
      x.resting_bpm && `resting ${fmt(x.resting_bpm.mean, 0)} bpm`, x.avg_bpm && `avg ${fmt(x.avg_bpm.mean, 0)} bpm`,
      x.min_bpm !== null && x.max_bpm !== null && `range ${fmt(x.min_bpm, 0)}–${fmt(x.max_bpm, 0)} bpm`,
      x.hrv_sdnn_ms && `HRV ${fmt(x.hrv_sdnn_ms.mean, 0)} ms`, x.irregular_events_count && `${x.irregular_events_count} irregular rhythm events`,
      x.spo2_percent && `SpO2 ${fmt(x.spo2_percent.mean, 1)}%${x.spo2_percent.count > 1 ? ` (min ${fmt(x.spo2_percent.min, 1)}%)` : ""}`,
    );
    return `${x.date}: ${ps.join(", ") || "no values"}`;
  });
  const ids = (d?.recent ?? []).filter((e) => dayInWeek(w, e.date)).map((e) => e.log_id);
  return block("heart_week", "Heart (last 7 days)", "week", lines, ids, days);
}

function sleepBlock(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "sleep");
  const days = (d?.days ?? []).filter((x) => dayInWeek(w, x.date));
  const lines = days.map((x) => {
    const ps = parts(
      x.deep_sleep_minutes !== null && `deep ${fmt(x.deep_sleep_minutes, 0)}`, x.rem_sleep_minutes !== null && `REM ${fmt(x.rem_sleep_minutes, 0)}`,
      x.light_sleep_minutes !== null && `light ${fmt(x.light_sleep_minutes, 0)}`, x.awake_minutes !== null && `awake ${fmt(x.awake_minutes, 0)}`,
    );
    const total = x.total_sleep_minutes !== null ? hm(x.total_sleep_minutes) : "total not given";
    return `${x.date}: ${total}${ps.length ? ` (${ps.join(", ")} min)` : ""}`;
  });
  lines.push(...(lines.length ? avgLine("Average", days.flatMap((x) => (x.total_sleep_minutes === null ? [] : [x.total_sleep_minutes])), hm) : []));
  const ids = (d?.recent ?? []).filter((e) => dayInWeek(w, e.date)).map((e) => e.log_id);
  return block("sleep_week", "Sleep (last 7 days)", "week", lines, ids, days);
}

function activityBlock(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "physical_activity");
  const days = (d?.days ?? []).filter((x) => dayInWeek(w, x.date));
  const lines = days.map((x) => {
    const ps = parts(
      x.steps !== null && `${int(x.steps)} steps`, x.active_minutes !== null && `${fmt(x.active_minutes, 0)} active min`,
      x.distance_m !== null && `${measured(x.distance_m / 1000, 1)} km`, x.exercise_sessions && `${x.exercise_sessions} exercise sessions`,
    );
    return `${x.date}: ${ps.join(", ") || "no values"}`;
  });
  lines.push(...(lines.length ? avgLine("Average", days.flatMap((x) => (x.steps === null ? [] : [x.steps])), (n) => `${int(n)} steps/day`) : []));
  const ids = (d?.recent ?? []).filter((e) => dayInWeek(w, e.date)).map((e) => e.log_id);
  return block("activity_week", "Physical activity (last 7 days)", "week", lines, ids, days);
}

/** The consensus thresholds, stated wherever a percentage of them is shown. */
const T = CGM_THRESHOLDS;
const CGM_BASIS = `in range ${T.low}–${T.high} mg/dL, below ${T.low} and ${T.veryLow}, above ${T.high} and ${T.veryHigh} (international consensus; from the readings' values, not devices' flags)`;

function glucoseBlock(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "glucose");
  const days = (d?.days ?? []).filter((x) => dayInWeek(w, x.date));
  const lines = days.map((x) => {
    const n = `${x.readings} reading${x.readings === 1 ? "" : "s"}`;
    const g = x.glucose_mg_dl;
    if (!g) return `${x.date}: ${n}`;
    if (g.count === 1) return `${x.date}: ${fmt(g.mean, 0)} mg/dL (${n})`;
    return `${x.date}: mean ${fmt(g.mean, 0)} mg/dL, range ${fmt(g.min, 0)}–${fmt(g.max, 0)}, ${fmt(x.time_in_range_percent, 1)}% in range (${n})`;
  });
  const m = cgmMetrics(days, w);
  if (m && m.readings > 1) {
    const cv = m.cv_percent === null ? "" : `, CV ${fmt(m.cv_percent, 1)}%`;
    lines.unshift(
      `**${w.firstDay} to ${w.lastDay}**: ${fmt(m.time_in_range_percent, 1)}% in range, ${fmt(m.below_70_percent, 1)}% below ${T.low} (${fmt(m.below_54_percent, 1)}% below ${T.veryLow}), ` +
        `${fmt(m.above_180_percent, 1)}% above ${T.high} (${fmt(m.above_250_percent, 1)}% above ${T.veryHigh}); mean ${fmt(m.mean_mg_dl, 0)} mg/dL, GMI ${fmt(m.gmi_percent, 1)}%${cv}; ` +
        `readings cover ${fmt(m.coverage_percent, 1)}% of the 7 days`,
      `**Thresholds**: ${CGM_BASIS}`,
    );
  }
  const ids = (d?.recent ?? []).filter((r) => dayInWeek(w, glucoseDay(r, w.tz))).map((r) => r.log_id);
  return block("glucose_week", "Glucose (last 7 days)", "week", lines, ids, { metrics: m, days });
}

/** The consensus reports CGM metrics over 14 days (and asks readings to cover 70 % of them). */
const CONSENSUS_DAYS = 14;

/**
 * Time in range over the 14 days ending on the day of the read: the period the consensus
 * reports, which a week is too short for. Said only when readings fall in it.
 */
function glucosePeriodBlock(state: PatientState, w: Window): ViewBlock[] {
  if (w.lastDay === "") return [];
  const first = addDays(w.lastDay, -(CONSENSUS_DAYS - 1));
  const days = (doc(state, "glucose")?.days ?? []).filter((x) => x.date >= first && x.date <= w.lastDay);
  const m = cgmMetrics(days, { ...w, firstDay: first });
  if (!m) return [];
  const enough = m.coverage_percent >= 70 ? "" : " (under the 70 % the consensus asks for: read these figures with care)";
  const lines = [
    `**${first} to ${w.lastDay}** (${CONSENSUS_DAYS} days): ${fmt(m.time_in_range_percent, 1)}% in range ${T.low}–${T.high} mg/dL, ` +
      `${fmt(m.below_70_percent, 1)}% below ${T.low} (${fmt(m.below_54_percent, 1)}% below ${T.veryLow}), ${fmt(m.above_180_percent, 1)}% above ${T.high} ` +
      `(${fmt(m.above_250_percent, 1)}% above ${T.veryHigh})`,
    `**Mean** ${fmt(m.mean_mg_dl, 0)} mg/dL, GMI ${fmt(m.gmi_percent, 1)}%${m.cv_percent === null ? "" : `, CV ${fmt(m.cv_percent, 1)}%`}; ${m.readings} readings cover ${fmt(m.coverage_percent, 1)}% of the ${CONSENSUS_DAYS} days${enough}`,
    `**Thresholds**: ${CGM_BASIS}`,
  ];
  // The readings behind it are the days' rollups; cite the latest readings kept in those days.
  const ids = (doc(state, "glucose")?.recent ?? []).filter((r) => { const d = glucoseDay(r, w.tz); return d >= first && d <= w.lastDay; }).map((r) => r.log_id);
  return block("glucose_14_days", "Glucose (last 14 days, consensus metrics)", "long_term", lines, ids, { first_day: first, last_day: w.lastDay, metrics: m });
}

function latestBlock(state: PatientState, w: Window): ViewBlock[] {
  const lines: string[] = [];
  const ids: string[] = [];
  const data: Record<string, unknown> = {};
  const heart = doc(state, "heart")?.latest;
  const hr = heart?.heart_rate;
  if (hr) {
    const v = hr.values;
    const ps = parts(
      typeof v.resting_bpm === "number" && `resting ${fmt(v.resting_bpm, 0)} bpm`, typeof v.avg_bpm === "number" && `avg ${fmt(v.avg_bpm, 0)} bpm`,
      typeof v.avg_hrv_sdnn_ms === "number" && `HRV ${fmt(v.avg_hrv_sdnn_ms, 0)} ms`,
    );
    lines.push(`**Heart rate**: ${ps.join(", ") || "summary"} on ${hr.date}`);
    ids.push(hr.log_id);
    data.heart_rate = hr;
  }
  const spo2 = heart?.spo2;
  if (spo2 && spo2Of(spo2) !== null) {
    lines.push(`**SpO2**: ${fmt(spo2Of(spo2), 1)}% on ${spo2.date}`);
    ids.push(spo2.log_id);
    data.spo2 = spo2;
  }
  const sl = doc(state, "sleep")?.latest;
  if (sl && sl.total_sleep_minutes !== null) {
    lines.push(`**Sleep**: ${hm(sl.total_sleep_minutes)} on ${sl.date}`);
    ids.push(sl.log_id);
    data.sleep = sl;
  }
  const act = doc(state, "physical_activity");
  const lastDay = act?.days[act.days.length - 1];
  if (lastDay && lastDay.steps !== null) {
    lines.push(`**Steps**: ${int(lastDay.steps)} on ${lastDay.date}`);
    ids.push(...(act?.recent ?? []).filter((e) => e.date === lastDay.date).map((e) => e.log_id));
    data.activity = lastDay;
  }
  const g = doc(state, "glucose")?.latest;
  if (g) {
    lines.push(`**Glucose**: ${fmt(g.glucose_mg_dl, 0)} mg/dL (${g.glucose_flag}${g.trend_arrow ? `, ${g.trend_arrow}` : ""}) on ${glucoseDay(g, w.tz)}`);
    ids.push(g.log_id);
    data.glucose = g;
  }
  return block("latest_readings", "Latest readings", "long_term", lines, ids, data);
}

/** Out of range in the week, by daily extremes (the rollups see every reading; the recent lists only the last 50). */
function outOfRange(state: PatientState, w: Window): ViewBlock[] {
  const lines: string[] = [];
  const ids: string[] = [];
  const data: unknown[] = [];
  const g = doc(state, "glucose");
  for (const x of (g?.days ?? []).filter((x) => dayInWeek(w, x.date) && x.glucose_mg_dl)) {
    const st = x.glucose_mg_dl as NonNullable<typeof x.glucose_mg_dl>;
    const low = st.min < GLUCOSE_LOW;
    const high = st.max > GLUCOSE_HIGH;
    if (!low && !high) continue;
    lines.push(`${x.date}: glucose ${parts(low && `as low as ${fmt(st.min, 0)} mg/dL`, high && `as high as ${fmt(st.max, 0)} mg/dL`).join(" and ")}`);
    const out = (r: GlucoseReading) => r.glucose_mg_dl < GLUCOSE_LOW || r.glucose_mg_dl > GLUCOSE_HIGH;
    ids.push(...(g?.recent ?? []).filter((r) => glucoseDay(r, w.tz) === x.date && out(r)).map((r) => r.log_id));
    data.push({ kind: "glucose", date: x.date, min: st.min, max: st.max });
  }
  const h = doc(state, "heart");
  for (const x of (h?.days ?? []).filter((x) => dayInWeek(w, x.date) && x.spo2_percent && x.spo2_percent.min < SPO2_LOW)) {
    lines.push(`${x.date}: SpO2 as low as ${fmt(x.spo2_percent?.min, 1)}%`);
    ids.push(...(h?.recent ?? []).filter((e) => e.date === x.date && (spo2Of(e) ?? 100) < SPO2_LOW).map((e) => e.log_id));
    data.push({ kind: "spo2", date: x.date, min: x.spo2_percent?.min });
  }
  return block("out_of_range", "Out-of-range readings (last 7 days)", "temp", lines, ids, data);
}

function blocks(state: PatientState, w: Window): ViewBlock[] {
  return [heartBlock, sleepBlock, activityBlock, glucoseBlock, glucosePeriodBlock, latestBlock, outOfRange].flatMap((f) => f(state, w));
}

function heartSummary(e: HeartEntry): string {
  if (e.kind === "spo2") return `SpO2 ${fmt(spo2Of(e), 1)}%`;
  const v = e.values;
  const ps = parts(typeof v.resting_bpm === "number" && `resting ${v.resting_bpm}`, typeof v.avg_bpm === "number" && `avg ${v.avg_bpm}`);
  return `heart rate ${ps.join(", ")} bpm`;
}

function entries(state: PatientState): RecentEntry[] {
  return [
    ...(doc(state, "heart")?.recent ?? []).map((e) => entry("heart", e.kind === "spo2" ? "spo2_reading" : "heart_rate_data", e, heartSummary(e))),
    ...(doc(state, "sleep")?.recent ?? []).map((s) =>
      entry("sleep", "sleep_data", s, `sleep ${s.total_sleep_minutes !== null ? hm(s.total_sleep_minutes) : "session"} (${s.date})`)),
    ...(doc(state, "physical_activity")?.recent ?? []).map((a) => {
      const ps = parts(a.steps !== null && `${int(a.steps)} steps`, a.active_minutes !== null && `${fmt(a.active_minutes, 0)} active min`);
      return entry("physical_activity", "activity_data", a, `activity ${ps.join(", ")} (${a.date})`);
    }),
    ...(doc(state, "glucose")?.recent ?? []).map((r) => entry("glucose", "cgm_reading", r, `glucose ${fmt(r.glucose_mg_dl, 0)} mg/dL (${r.glucose_flag})`)),
  ];
}

export const deviceSnapshot: ViewDef = {
  type: "device_snapshot", title: "Device snapshot", inputs: ["heart", "sleep", "physical_activity", "glucose"], blocks, entries,
};
