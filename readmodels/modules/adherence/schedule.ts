/**
 * Scheduled-dose tracking: a listed medication's schedule_times, laid out over the last
 * days up to the latest log the module has seen, each scheduled time matched with the
 * dose report that names it. Without it a patient who reports one dose a week reads as
 * fully adherent. Pure: "now" is the latest event time of the fold, never the clock, so
 * the result is a function of the logs.
 */
import { identityKey } from "../../lib/identity.js";
import { maxTime, timeMs } from "../../lib/time.js";
import type { Medication, MedicationsDoc } from "../medications/index.js";
import { DEFAULT_ADHERENCE_WINDOW_MINUTES, findMedication } from "../medications/index.js";
import type { RemovedMedication } from "./removed.js";
import { DATE_RE, nearest, slotsBetween, TIME_RE, zonedMs, type Slot } from "./slots.js";

/** Days of schedule tracked, ending at the latest log. @default 7 */
export const SCHEDULE_DAYS = 7;
/** Scheduled doses listed per medication (the latest). @default 50 */
export const SCHEDULED_DOSES = 50;

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** One scheduled time and what was reported for it. */
export interface ScheduledDose {
  /** UTC instant of the schedule_times entry on that day, in the patient's timezone. */
  scheduled_time: string;
  /** unreported: no taken or skipped report by the end of its window. */
  status: "taken" | "skipped" | "unreported";
  /** The report's log (the latest one when several name this time). */
  log_id: string | null;
}

/** A listed medication with schedule_times, tracked over [since, until]. */
export interface MedicationSchedule {
  medication_name: string | null;
  rxnorm_cui: string | null;
  schedule_times: string[];
  window_minutes: number;
  /**
   * The latest of: start_date (local midnight), else when the medication was listed (or
   * the scheduled time of an earlier first dose); `until` − 7 days (exclusive); the oldest
   * dose still kept in `recent` once older ones were dropped.
   */
  since: string;
  /** The latest event time the module has seen. */
  until: string;
  /** When it was taken off the list (null while listed): its times from then on are not expected. */
  removed_at: string | null;
  /** Scheduled times from `since` whose window closed by `until`, and any with a report (even one ahead of `until`): taken + skipped + unreported. */
  expected: number;
  taken: number;
  skipped: number;
  unreported: number;
  /** The latest 50 expected doses, by scheduled time. */
  doses: ScheduledDose[];
}

/** The schedule_times a medication had from `from` on (null: from before anything tracked). */
export interface ScheduleSegment {
  from: string | null;
  schedule_times: string[];
}

/**
 * When a listed medication's schedule_times changed, as the fold saw them: a change holds
 * from the medication's updated_at on, so doses before it are laid out on the old times.
 * Without it, adding an evening dose on Friday made Monday's evening "unreported".
 */
export interface ScheduleHistory {
  /** The medication's identity: RxNorm CUI, else normalized name. */
  key: string;
  /** Ascending by `from`; the first starts at null. Segments that ended before the tracked week are dropped. */
  segments: ScheduleSegment[];
}

/** What tracking needs of a dose report: the fields adherence's Dose starts with. */
export interface DoseRef {
  timestamp: string;
  log_id: string;
  medication_name: string | null;
  rxnorm_cui: string | null;
  status: "taken" | "skipped";
  scheduled_time: string | null;
}

/** When each dose report was for (they stay in `recent` over many logs). */
const doseTimes = new WeakMap<DoseRef, number>();

/** The smaller of two epoch ms, ignoring NaN (unknown); NaN when both are. */
const minKnown = (a: number, b: number) => (Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.min(a, b));

function doseTime(d: DoseRef): number {
  let at = doseTimes.get(d);
  if (at === undefined) {
    const sched = d.scheduled_time === null ? NaN : timeMs(d.scheduled_time);
    at = Number.isNaN(sched) ? timeMs(d.timestamp) : sched;
    doseTimes.set(d, at);
  }
  return at;
}

/** A dose report with the instant it was for: its scheduled_time, else when it was reported. */
interface TimedDose {
  at: number;
  dose: DoseRef;
}

/** A medication's valid schedule_times, unique and sorted. */
const timesOf = (m: Medication): string[] => [...new Set((m.schedule_times ?? []).filter((t) => TIME_RE.test(t)))].sort();

const medicationKey = (m: Medication): string => identityKey({ codes: [m.rxnorm_cui], name: m.medication_name });

const sameTimes = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * The schedule history with what the medication list holds now (the list as the log
 * being folded left it: every medication_list_update is routed to adherence, so each list
 * the fold passes through is seen). Returns `prev` itself when nothing changed.
 */
export function observeSchedules(prev: readonly ScheduleHistory[], meds: Readonly<MedicationsDoc> | undefined, until: string): readonly ScheduleHistory[] {
  // A day more than tracking looks back, so a dose reported early for the first tracked time still finds its segment.
  const cutoff = timeMs(until) - (SCHEDULE_DAYS + 1) * DAY_MS;
  const out: ScheduleHistory[] = [];
  let changed = false;
  for (const m of meds?.medications ?? []) {
    const times = timesOf(m);
    const key = medicationKey(m);
    const h = prev.find((x) => x.key === key);
    if (!h) {
      if (times.length === 0) continue;
      out.push({ key, segments: [{ from: null, schedule_times: times }] });
      changed = true;
      continue;
    }
    let segments = h.segments;
    if (!sameTimes(segments[segments.length - 1]!.schedule_times, times)) segments = [...segments, { from: m.updated_at, schedule_times: times }];
    let drop = 0;
    while (drop < segments.length - 1 && timeMs(segments[drop + 1]!.from ?? "") <= cutoff) drop++;
    if (drop > 0) segments = [{ from: null, schedule_times: segments[drop]!.schedule_times }, ...segments.slice(drop + 1)];
    if (segments !== h.segments) changed = true;
    out.push(segments === h.segments ? h : { key, segments });
  }
  return changed || out.length !== prev.length || out.some((h, i) => h !== prev[i]) ? out : prev;
}

/** Scheduled instants over a range under each segment's times, each segment from its `from` to the next one's. */
function segmentSlots(segments: readonly ScheduleSegment[], from: number, to: number, tz: string): readonly Slot[] {
  if (segments.length === 1) return slotsBetween(segments[0]!.schedule_times, from, to, tz);
  const out: Slot[] = [];
  for (let i = 0; i < segments.length; i++) {
    const lo = i === 0 ? -Infinity : timeMs(segments[i]!.from ?? "");
    const hi = i + 1 < segments.length ? timeMs(segments[i + 1]!.from ?? "") : Infinity;
    for (const slot of slotsBetween(segments[i]!.schedule_times, from, to, tz)) if (slot.ms >= lo && slot.ms < hi) out.push(slot);
  }
  return out;
}

function track(
  m: Medication, doses: readonly TimedDose[], firstDoseAt: string | undefined, floor: number, until: string, tz: string,
  history: readonly ScheduleSegment[] | undefined, removedAt: string | null,
): MedicationSchedule | undefined {
  const times = timesOf(m);
  const untilMs = timeMs(until);
  const startDate = m.start_date === null ? undefined : DATE_RE.exec(m.start_date)?.[0];
  const firstDose = timeMs(firstDoseAt ?? "");
  // Without a start_date: from when it was listed (its oldest source kept), or an earlier first dose.
  let start = startDate ? zonedMs(startDate, "00:00", tz) : minKnown(timeMs(m.sources[0]?.timestamp ?? ""), firstDose);
  if (times.length === 0 || Number.isNaN(start) || Number.isNaN(untilMs)) return undefined;
  // Times after (not at) until − 7 days, as a view's week counts them.
  const weekStart = untilMs - SCHEDULE_DAYS * DAY_MS;
  const end = removedAt === null ? Infinity : timeMs(removedAt);
  if (end <= weekStart) return undefined;
  const from = Math.max(floor, weekStart);
  // A day of margin each side (of the start too), so a dose near an edge goes to its own slot, not the edge one.
  const segments = history ?? [{ from: null, schedule_times: times }];
  const slots = segmentSlots(segments, Math.max(Math.min(from, start), from - DAY_MS) - DAY_MS, untilMs + DAY_MS, tz);
  // The first dose counts for the scheduled time it was nearest, even one before the listing.
  if (!startDate && !Number.isNaN(firstDose)) start = minKnown(start, slots[nearest(slots, firstDose)]?.ms ?? NaN);
  const since = Math.max(from, start);
  if (since > untilMs) return undefined;
  const window = m.adherence_window_minutes ?? DEFAULT_ADHERENCE_WINDOW_MINUTES;
  const reported = new Map<Slot, DoseRef>();
  // In event-time order, so the latest report for a time wins.
  for (const d of doses) {
    const i = d.at < since - DAY_MS ? -1 : nearest(slots, d.at);
    if (i >= 0) reported.set(slots[i]!, d.dose);
  }
  const out: ScheduledDose[] = [];
  let taken = 0;
  let skipped = 0;
  for (const slot of slots) {
    if (slot.ms < since || slot.ms <= weekStart || slot.ms >= end) continue;
    const r = reported.get(slot);
    // Still inside its window (or to come) with no report yet: not missed so far. A dose reported ahead counts.
    if (!r && slot.ms + window * 60_000 > untilMs) continue;
    out.push({ scheduled_time: slot.iso, status: r ? r.status : "unreported", log_id: r ? r.log_id : null });
    if (r?.status === "taken") taken++;
    else if (r?.status === "skipped") skipped++;
  }
  return {
    medication_name: m.medication_name, rxnorm_cui: m.rxnorm_cui, schedule_times: times, window_minutes: window,
    since: iso(since), until, removed_at: removedAt, expected: out.length, taken, skipped, unreported: out.length - taken - skipped,
    doses: out.length > SCHEDULED_DOSES ? out.slice(-SCHEDULED_DOSES) : out,
  };
}

/**
 * The schedule of every listed medication that has schedule_times and a start (its
 * start_date, else when listed or first reported), up to `until`. `recent` holds the
 * doses kept (in event-time order, `full` when older ones were dropped: times before its
 * oldest are then not tracked, their reports being gone); `firstDoseAt` the first dose
 * per medication; `history` when each one's schedule_times changed (see observeSchedules);
 * `removed` the medications taken off the list, laid out up to their removal.
 */
export function trackSchedules(
  meds: Readonly<MedicationsDoc> | undefined,
  recent: readonly DoseRef[],
  full: boolean,
  firstDoseAt: (m: Medication) => string | undefined,
  until: string,
  tz: string,
  history: readonly ScheduleHistory[] = [],
  removed: readonly RemovedMedication[] = [],
): MedicationSchedule[] {
  const removedAt = new Map(removed.map((r) => [r.medication, r.removed_at]));
  const ended = { medications: removed.map((r) => r.medication) };
  const scheduled = [...(meds?.medications ?? []), ...ended.medications].filter((m) => (m.schedule_times ?? []).length > 0);
  if (scheduled.length === 0) return [];
  const floor = full && recent.length > 0 ? timeMs(recent[0]!.timestamp) : -Infinity;
  // A medication's listings in time order: each one taken off the list by its removal, then the listed one.
  const listings = new Map<string, RemovedMedication[]>();
  for (const r of removed) listings.set(medicationKey(r.medication), [...(listings.get(medicationKey(r.medication)) ?? []), r]);
  const inForce = (m: Medication, at: number): Medication => listings.get(medicationKey(m))?.find((r) => at < timeMs(r.removed_at))?.medication ?? m;
  const byMed = new Map<Medication, TimedDose[]>();
  // Doses of one medication name it alike: look each name up once.
  const found = new Map<string, Medication | undefined>();
  for (const d of recent) {
    const key = `${d.rxnorm_cui ?? ""}\u0000${d.medication_name ?? ""}`;
    let m = found.get(key);
    if (m === undefined && !found.has(key)) found.set(key, (m = findMedication(meds, d) ?? findMedication(ended, d)));
    if (!m) continue;
    const timed = { at: doseTime(d), dose: d };
    // A dose before a removal was one of that listing's.
    m = inForce(m, timed.at);
    if (!scheduled.includes(m)) continue;
    const list = byMed.get(m);
    if (list) list.push(timed);
    else byMed.set(m, [timed]);
  }
  const out: MedicationSchedule[] = [];
  for (const m of scheduled) {
    const key = medicationKey(m);
    // Listed again: from its latest removal on, the times before being the earlier listing's.
    const relisted = removedAt.has(m) ? -Infinity : Math.max(-Infinity, ...(listings.get(key) ?? []).map((r) => timeMs(r.removed_at)));
    const t = track(m, byMed.get(m) ?? [], firstDoseAt(m), Math.max(floor, relisted), until, tz, history.find((h) => h.key === key)?.segments, removedAt.get(m) ?? null);
    if (t) out.push(t);
  }
  return out;
}

/** The horizon: the latest event time among this log and what was tracked before it (the same as the log's in a sorted fold). */
export function horizonOf(prev: readonly MedicationSchedule[], timestamp: string): string {
  return prev.reduce((h, x) => maxTime(h, x.until), timestamp);
}
