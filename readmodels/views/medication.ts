/** medication_snapshot: the medication list, the week's adherence, adverse events and missed doses. */
import { normName } from "../lib/payload.js";
import { zonedMs } from "../modules/adherence/slots.js";
import { scheduleUntil, type AdverseEvent, type Dose, type MedicationSchedule, type ScheduledDose } from "../modules/adherence/index.js";
import type { Medication } from "../modules/medications/index.js";
import type { PatientState } from "../patient-state.js";
import { addDays, cmpTime, maxTime, timeMs } from "../lib/time.js";
import { block, calendarDate, clean, day, doc, entry, fmt, hhmm, inWeek, sourceIds } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

/** The adherence module keeps the latest 50 doses: a week with more is only partly seen. */
const RECENT_DOSES = 50;

/** A medication's identity across the list, doses and schedules: its RxNorm code, else its name. */
export const keyOf = (x: { rxnorm_cui: string | null; medication_name: string | null }) =>
  x.rxnorm_cui !== null ? `rx:${x.rxnorm_cui}` : `name:${normName(x.medication_name ?? "")}`;

function doseText(m: Medication): string | null {
  if (m.dose === null) return m.dose_unit;
  return m.dose_unit !== null && !m.dose.toLowerCase().includes(m.dose_unit.toLowerCase()) ? `${m.dose} ${m.dose_unit}` : m.dose;
}

function medLine(m: Medication, w: Window): string {
  const parts = [doseText(m), m.frequency, [m.route, m.form].filter((x) => x !== null).join(" ") || null].filter((x): x is string => !!x);
  const times = m.schedule_times && m.schedule_times.length > 0 ? `; at ${m.schedule_times.join(", ")}` : "";
  const since = m.start_date !== null ? `; since ${calendarDate(m.start_date, w.tz)}` : "";
  const by = m.prescribed_by?.name ? `; prescribed by ${clean(m.prescribed_by.name, 60)}` : "";
  const what = parts.length ? ` ${parts.map((p) => clean(p, 60)).join(", ")}` : "";
  return `**${clean(m.medication_name ?? m.rxnorm_cui ?? "unnamed", 80)}**${what}${times}${since}${by}`;
}

interface Tally {
  name: string; taken: number; skipped: number; on_time: number; early: number; late: number; unscheduled: number;
  /** The logs of the reports without a scheduled time (the schedule gives each to its nearest scheduled time). */
  unscheduled_ids: string[];
  /** Scheduled times reported taken again after a taken report (Dose.repeat), once per repeat. */
  repeated: string[];
  log_ids: string[];
}

/** Listed medications' scheduled doses of the week (by scheduled time), for those tracked: read once per render by both blocks. */
type WeekSchedules = ReadonlyMap<Medication, ScheduledDose[]>;

/**
 * The schedules as they stand at `at`: the module lays them out up to the latest log it
 * saw; read later, the doses due since then (a patient who stopped reporting) count as
 * not reported too.
 */
export function schedulesAt(state: PatientState, at: string | null): readonly MedicationSchedule[] {
  const a = doc(state, "adherence");
  if (!a || a.schedule.length === 0 || at === null) return a?.schedule ?? [];
  const horizon = a.schedule.reduce((h, x) => maxTime(h, x.until), a.schedule[0]!.until);
  if (cmpTime(at, horizon) <= 0) return a.schedule;
  return scheduleUntil(a, doc(state, "medications"), at, state.timezone).schedule;
}

/**
 * Scheduled listings taken off the list but still in the tracked week, as they were listed
 * (a medication listed again too: the doses missed under its earlier listing are that one's).
 */
function endedListings(state: PatientState): Medication[] {
  return (doc(state, "adherence")?.removed ?? []).map((r) => r.medication);
}

/** The listing a schedule was laid out for: the listed medication, or once off the list the listing its removal ended. */
export function listingOf(state: PatientState, sch: MedicationSchedule): Medication | undefined {
  if (sch.removed_at === null) return (doc(state, "medications")?.medications ?? []).find((m) => keyOf(m) === keyOf(sch));
  return (doc(state, "adherence")?.removed ?? []).find((r) => r.removed_at === sch.removed_at && keyOf(r.medication) === keyOf(sch))?.medication;
}

function weekSchedules(state: PatientState, w: Window): WeekSchedules {
  const out = new Map<Medication, ScheduledDose[]>();
  for (const sch of schedulesAt(state, w.asOf)) {
    const m = listingOf(state, sch);
    if (m) out.set(m, sch.doses.filter((d) => inWeek(w, d.scheduled_time)));
  }
  return out;
}

/** "; 11 of 14 scheduled doses not reported", or nothing when every scheduled dose of the week has a report. */
function unreportedText(doses: readonly ScheduledDose[] | undefined): string {
  const n = (doses ?? []).filter((d) => d.status === "unreported").length;
  return n > 0 && doses ? `; ${n} of ${doses.length} scheduled dose${doses.length === 1 ? "" : "s"} not reported` : "";
}

/**
 * A scheduled medication's week, each dose once by its scheduled time: "11 of 14 scheduled
 * doses taken (2 of them reported without a scheduled time), 1 skipped, 2 not reported"
 * (the three add up to the schedule; `unscheduled`: the logs of the reports without a
 * scheduled time, which the schedule gives to their nearest time). A report made this
 * week for a dose scheduled before it counts in that dose's week.
 */
function scheduledCounts(doses: readonly ScheduledDose[], unscheduled: readonly string[]): string {
  const ids = new Set(unscheduled);
  const n = (status: ScheduledDose["status"]) => doses.filter((d) => d.status === status).length;
  /** " (2 of them reported without a scheduled time)" after a count whose doses were so decided. */
  const without = (status: ScheduledDose["status"]) => {
    const k = doses.filter((d) => d.status === status && d.log_id !== null && ids.has(d.log_id)).length;
    return k === 0 ? "" : k === 1 && n(status) === 1 ? " (reported without a scheduled time)" : ` (${k} of them reported without a scheduled time)`;
  };
  return `${n("taken")} of ${doses.length} scheduled dose${doses.length === 1 ? "" : "s"} taken${without("taken")}, ${n("skipped")} skipped${without("skipped")}, ${n("unreported")} not reported`;
}

/** "; 1 more reported without a scheduled time": such reports that decided none of the week's scheduled doses. */
function moreText(doses: readonly ScheduledDose[], unscheduled: readonly string[]): string {
  const decided = new Set(doses.map((d) => d.log_id));
  const more = unscheduled.filter((id) => !decided.has(id)).length;
  return more > 0 ? `; ${more} more reported without a scheduled time` : "";
}

/** "; 2026-11-27 08:00 dose reported taken twice": a dose reported taken again is one dose, but the repeat may be a double dose. */
function repeatedText(repeats: readonly string[], tz: string): string {
  const times = new Map<string, number>();
  for (const t of repeats) times.set(t, (times.get(t) ?? 0) + 1);
  const said = [...times].map(([t, n]) => `${day(t, tz)} ${hhmm(t, tz)} dose reported taken ${n === 1 ? "twice" : `${n + 1} times`}`);
  return said.length > 0 ? `; ${said.join(", ")}` : "";
}

function adherenceBlock(state: PatientState, meds: readonly Medication[], weekly: WeekSchedules, w: Window): ViewBlock[] {
  const a = doc(state, "adherence");
  if (!a) return [];
  const wk = a.recent.filter((d) => inWeek(w, d.timestamp));
  const tallies = new Map<string, Tally>();
  for (const d of wk) {
    const listed = listedFor(meds, d);
    const k = listed ? keyOf(listed) : keyOf(d);
    const t = tallies.get(k) ?? { name: doseName(meds, d), taken: 0, skipped: 0, on_time: 0, early: 0, late: 0, unscheduled: 0, unscheduled_ids: [], repeated: [], log_ids: [] };
    t.log_ids.push(d.log_id);
    tallies.set(k, t);
    if (d.repeat && d.scheduled_time !== null) t.repeated.push(d.scheduled_time);
    // A report a later one superseded is no dose: the later one says what became of it.
    if (d.superseded_by !== null) continue;
    if (d.status === "taken") t.taken++;
    else t.skipped++;
    if (d.scheduled_time === null) {
      t.unscheduled++;
      t.unscheduled_ids.push(d.log_id);
    }
    if (d.timing !== null) t[d.timing]++;
  }
  const list = [...tallies.entries()].map(([k, t]) => {
    const m = meds.find((x) => keyOf(x) === k);
    return { ...t, scheduled: m ? weekly.get(m) : undefined };
  });
  const lines = list.map((t) => {
    const timing = t.on_time + t.early + t.late > 0 ? `; ${t.on_time} on time, ${t.early} early, ${t.late} late` : "";
    const repeated = repeatedText(t.repeated, w.tz);
    if (t.scheduled && t.scheduled.length > 0) return `**${clean(t.name, 80)}**: ${scheduledCounts(t.scheduled, t.unscheduled_ids)}${timing}${moreText(t.scheduled, t.unscheduled_ids)}${repeated}`;
    const total = t.taken + t.skipped;
    return `**${clean(t.name, 80)}**: ${t.taken} of ${total} dose${total === 1 ? "" : "s"} taken, ${t.skipped} skipped${timing}${repeated}`;
  });
  const scheduledSilent = meds.filter((m) => (m.schedule_times ?? []).length > 0 && !tallies.has(keyOf(m)));
  lines.push(...scheduledSilent.map((m) =>
    `**${clean(m.medication_name ?? m.rxnorm_cui ?? "unnamed", 80)}**: no doses recorded${unreportedText(weekly.get(m))}`));
  const partial = a.recent.length >= RECENT_DOSES && wk.length === a.recent.length;
  if (partial && lines.length > 0) lines.push(`Counts cover the latest ${RECENT_DOSES} recorded doses, from ${day(a.recent[0]!.timestamp, w.tz)}`);
  // What the schedule says comes from the listing that set it.
  const tracked = meds.flatMap((m) => {
    const doses = weekly.get(m);
    return doses ? [{ m, expected: doses.length, unreported: doses.filter((d) => d.status === "unreported").length }] : [];
  });
  return block("adherence_week", "Adherence (last 7 days)", "week", lines,
    [...wk.map((d) => d.log_id), ...scheduledSilent.flatMap(sourceIds), ...tracked.filter((x) => x.unreported > 0).flatMap((x) => sourceIds(x.m))],
    {
      medications: list.map(({ log_ids: _ids, unscheduled_ids: _u, scheduled: _s, ...t }) => t),
      no_doses: scheduledSilent.map((m) => m.medication_name),
      scheduled: tracked.map(({ m, expected, unreported }) => ({ medication_name: m.medication_name, expected, unreported })),
      partial,
    });
}

function aeLine(e: AdverseEvent, w: Window): string {
  const sev = e.severity !== null ? ` (${clean(e.severity, 30)})` : "";
  const onset = e.onset_date !== null ? `, onset ${calendarDate(e.onset_date, w.tz)}` : "";
  const what = clean(e.description ?? "adverse event", 120);
  return `**${clean(e.medication_name ?? e.medication_identifier, 80)}**: ${what}${sev}${onset}, reported ${day(e.timestamp, w.tz)}`;
}

const aeData = (e: AdverseEvent) => ({
  medication: e.medication_name ?? e.medication_identifier, description: e.description, severity: e.severity, onset_date: e.onset_date, reported_at: e.timestamp,
});

/** The listed medication a dose names (by RxNorm CUI, else by name), if any. */
function listedFor(meds: readonly Medication[], d: Dose): Medication | undefined {
  const name = d.medication_name === null ? null : normName(d.medication_name);
  return meds.find((m) => keyOf(m) === keyOf(d)) ?? meds.find((m) => m.medication_name !== null && normName(m.medication_name) === name);
}

const doseName = (meds: readonly Medication[], d: Dose) => listedFor(meds, d)?.medication_name ?? d.medication_name ?? d.rxnorm_cui ?? "unnamed";

/**
 * A dose to follow up: reported skipped, or the scheduled doses of one medication that got
 * no report (one line for all of them: a week of silence would otherwise fill the block).
 */
interface Missed {
  name: string;
  status: "skipped" | "unreported";
  /** The dose's, or the latest unreported one's. */
  scheduled_time: string | null;
  reported_at: string | null;
  /** Unreported: every scheduled time, ascending. */
  scheduled_times: string[];
  ids: string[];
}

function missedLine(x: Missed, w: Window): string {
  const when = (t: string) => `${day(t, w.tz)} ${hhmm(t, w.tz)}`;
  const name = `**${clean(x.name, 80)}**`;
  if (x.status === "skipped") return `${name}: skipped, ${x.scheduled_time !== null ? `scheduled ${when(x.scheduled_time)}` : `reported ${day(x.reported_at, w.tz)}`}`;
  const n = x.scheduled_times.length;
  return n === 1 ? `${name}: not reported, scheduled ${when(x.scheduled_times[0]!)}`
    : `${name}: ${n} scheduled doses not reported, ${when(x.scheduled_times[0]!)} to ${when(x.scheduled_times[n - 1]!)}`;
}

/** The week's skipped doses and, per medication, its scheduled doses without a report; latest first. */
function missedDoses(meds: readonly Medication[], a: { recent: readonly Dose[] } | undefined, weekly: WeekSchedules, w: Window): Missed[] {
  const skipped = (a?.recent ?? []).filter((d) => d.status === "skipped" && d.superseded_by === null && inWeek(w, d.timestamp)).map((d): Missed => ({
    name: doseName(meds, d), status: "skipped", scheduled_time: d.scheduled_time, reported_at: d.timestamp, scheduled_times: [], ids: [d.log_id],
  }));
  const unreported = meds.flatMap((m): Missed[] => {
    const times = (weekly.get(m) ?? []).filter((d) => d.status === "unreported").map((d) => d.scheduled_time);
    return times.length === 0 ? [] : [{
      name: m.medication_name ?? m.rxnorm_cui ?? "unnamed", status: "unreported", scheduled_time: times[times.length - 1]!, reported_at: null,
      scheduled_times: times, ids: sourceIds(m),
    }];
  });
  const at = (x: Missed) => x.scheduled_time ?? x.reported_at ?? "";
  // On a tie the stable sort keeps skipped before unreported, then list order.
  return [...skipped, ...unreported].sort((x, y) => -cmpTime(at(x), at(y)));
}

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const meds = doc(state, "medications")?.medications ?? [];
  const a = doc(state, "adherence");
  const events = [...(a?.adverse_events ?? [])].reverse();
  const recentAe = events.filter((e) => inWeek(w, e.timestamp));
  const olderAe = events.filter((e) => !inWeek(w, e.timestamp));
  // A medication taken off the list still missed the doses due while it was on it.
  const tracked = [...meds, ...endedListings(state)];
  const weekly = weekSchedules(state, w);
  const missed = missedDoses(tracked, a, weekly, w);
  return [
    ...block("current_medications", "Current medications", "long_term", meds.map((m) => medLine(m, w)), meds.flatMap(sourceIds),
      meds.map((m) => ({
        medication_name: m.medication_name, rxnorm_cui: m.rxnorm_cui, dose: doseText(m), frequency: m.frequency, route: m.route, form: m.form,
        schedule_times: m.schedule_times, start_date: m.start_date, prescribed_by: m.prescribed_by,
      }))),
    ...adherenceBlock(state, meds, weekly, w),
    ...block("recent_adverse_events", "Adverse events (last 7 days)", "week",
      recentAe.map((e) => aeLine(e, w)), recentAe.map((e) => e.log_id), recentAe.map(aeData)),
    ...block("adverse_events", "Earlier adverse events", "long_term", olderAe.map((e) => aeLine(e, w)), olderAe.map((e) => e.log_id), olderAe.map(aeData)),
    ...block("missed_doses", "Missed doses (last 7 days)", "temp", missed.map((x) => missedLine(x, w)), missed.flatMap((x) => x.ids),
      missed.map((x) => x.status === "skipped"
        ? { medication: x.name, status: x.status, scheduled_time: x.scheduled_time, reported_at: x.reported_at }
        : { medication: x.name, status: x.status, scheduled_times: x.scheduled_times })),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  const a = doc(state, "adherence");
  const timing = (d: Dose) => (d.on_time === true ? ", on time" : d.on_time === false ? `, ${fmt(d.deviation_minutes, 0)} min off schedule` : "") +
    (d.repeat ? ", a dose already reported taken" : d.superseded_by !== null ? ", superseded by a later report of the dose" : "");
  return [
    ...(doc(state, "medications")?.medications ?? []).flatMap((m) =>
      m.sources.map((s) => entry("medications", "medication_list_update", s, `${m.medication_name ?? m.rxnorm_cui} listed or updated`))),
    ...(a?.recent ?? []).map((d) => entry("adherence", "medication_adherence", d, `${d.medication_name ?? d.rxnorm_cui} ${d.status}${timing(d)}`)),
    ...(a?.adverse_events ?? []).map((e) => entry("adherence", "medication_adverse_event", e,
      `${e.medication_name ?? e.medication_identifier}: ${clean(e.description ?? "adverse event", 80)}${e.severity ? ` (${e.severity})` : ""}`)),
  ];
}

/**
 * The next time a scheduled dose's window closes after the read: from then on a view
 * rendered now would miss a dose not reported, so it is rendered again.
 */
function expiresAt(state: PatientState, w: Window): string | null {
  if (w.asOf === null) return null;
  const readMs = timeMs(w.asOf);
  let next = Infinity;
  for (const sch of doc(state, "adherence")?.schedule ?? []) {
    // Off the list: no dose of it is due any more.
    if (sch.removed_at !== null) continue;
    for (const date of [w.lastDay, addDays(w.lastDay, 1)]) {
      for (const time of sch.schedule_times) {
        const closes = zonedMs(date, time, state.timezone) + sch.window_minutes * 60_000;
        if (closes > readMs && closes < next) next = closes;
      }
    }
  }
  return Number.isFinite(next) ? new Date(next).toISOString() : null;
}

export const medicationSnapshot: ViewDef = { type: "medication_snapshot", title: "Medication snapshot", inputs: ["medications", "adherence"], blocks, entries, expiresAt };
