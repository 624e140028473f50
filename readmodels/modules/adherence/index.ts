import type { LogOf, TypedLog } from "../../log-record.js";
import { findByIdentity, type Identity } from "../../lib/identity.js";
import { insertSorted, RECENT, replaceAt } from "../../lib/lists.js";
import { finite, items, oneOf, text } from "../../lib/payload.js";
import { maxTime, minTime, timeMs } from "../../lib/time.js";
import { withDoc, type ModuleContext, type ModuleState, type ReadModel } from "../../module.js";
import { DEFAULT_ADHERENCE_WINDOW_MINUTES, findMedication, type Medication, type MedicationsDoc } from "../medications/index.js";
import { endedMedications, noteRemovals, unlistedMedications, type RemovedMedication } from "./removed.js";
import { horizonOf, observeSchedules, trackSchedules, type DoseRef, type MedicationSchedule, type ScheduleHistory } from "./schedule.js";

export type { MedicationSchedule, ScheduledDose, ScheduleHistory, ScheduleSegment } from "./schedule.js";
export type { RemovedMedication } from "./removed.js";

/** A dose report; `timestamp` is when the dose was reported taken or skipped (the log's). */
export interface Dose extends DoseRef {
  dose_amount: number | null;
  dose_unit: string | null;
  /** Minutes after (+) or before (-) scheduled_time; null without one. */
  deviation_minutes: number | null;
  /** The medication's adherence_window_minutes at the time of the dose. @default 60 */
  window_minutes: number;
  /** Taken within ± window of scheduled_time; null when skipped or unscheduled. */
  on_time: boolean | null;
  /** on_time, or which side of the window a taken dose fell; null when skipped or unscheduled. */
  timing: "on_time" | "early" | "late" | null;
  /**
   * The log of a later report of the same scheduled dose (medication and scheduled_time),
   * which decides it instead: this one is no dose of its own in any count. Null when it decides.
   */
  superseded_by: string | null;
  /** Taken, for a scheduled dose whose report before it said taken too: one dose reported twice (or a double dose), counted once. */
  repeat: boolean;
}

/**
 * Counts per medication, identified by rxnorm_cui else normalized name: a scheduled dose
 * counts once, as its latest report says (one whose earlier report has left `recent`
 * counts again); a report without scheduled_time is a dose of its own.
 */
export interface MedicationAdherence {
  medication_name: string | null;
  rxnorm_cui: string | null;
  taken: number;
  skipped: number;
  on_time: number;
  /** Taken with a scheduled_time, before its window. */
  early: number;
  /** Taken with a scheduled_time, after its window. */
  late: number;
  /** Reports of a scheduled dose already reported taken (see Dose.repeat), not counted in taken. */
  repeated: number;
  last_status: "taken" | "skipped";
  /** The first dose reported (schedule tracking of a medication without start_date starts here when it came before the listing). */
  first_event_at: string;
  last_event_at: string;
  last_taken_at: string | null;
}

export interface AdverseEvent {
  timestamp: string;
  log_id: string;
  medication_identifier: string;
  /** The listed medication it names, when one matches (by RxNorm CUI or name). */
  medication_name: string | null;
  rxnorm_cui: string | null;
  description: string | null;
  severity: string | null;
  onset_date: string | null;
  recorded_at: string | null;
}

export interface AdherenceDoc {
  medications: MedicationAdherence[];
  /** The last 50 doses by event time. */
  recent: Dose[];
  /** medication_adverse_event reports, the last 50. */
  adverse_events: AdverseEvent[];
  /**
   * Medications with schedule_times, listed or taken off the list within the tracked week:
   * each scheduled time of the last 7 days up to the module's latest log (up to the removal
   * for one taken off), and whether a dose report named it (unreported otherwise).
   */
  schedule: MedicationSchedule[];
  /** Scheduled medications taken off the list within the last 8 days, as listed before. */
  removed: RemovedMedication[];
  /** When each scheduled medication's schedule_times changed, over the tracked week: doses are laid out on the times then in force. */
  schedule_history: ScheduleHistory[];
}

const identityOf = (m: Pick<MedicationAdherence, "rxnorm_cui" | "medication_name">): Identity => ({
  codes: [m.rxnorm_cui],
  name: m.medication_name,
});

export const handles = ["medication_adherence", "medication_adverse_event", "medication_list_update"] as const;
type AdherenceLog = TypedLog<(typeof handles)[number]>;

const STATUSES = ["taken", "skipped"] as const;

type Counts = Pick<MedicationAdherence, "taken" | "skipped" | "on_time" | "early" | "late">;

/** The counts with one dose added (+1) or taken back (-1, a report a later one superseded). */
function tally(c: Counts, d: Dose, sign: 1 | -1): Counts {
  return {
    taken: c.taken + (d.status === "taken" ? sign : 0),
    skipped: c.skipped + (d.status === "skipped" ? sign : 0),
    on_time: c.on_time + (d.timing === "on_time" ? sign : 0),
    early: c.early + (d.timing === "early" ? sign : 0),
    late: c.late + (d.timing === "late" ? sign : 0),
  };
}

/** Whether `d` reports the dose of `med` scheduled at the instant `scheduledMs` (a later report of it decides it instead). */
export function reportsDose(d: Dose, med: Pick<Dose, "rxnorm_cui" | "medication_name">, scheduledMs: number): boolean {
  return d.scheduled_time !== null && timeMs(d.scheduled_time) === scheduledMs && findByIdentity([d], identityOf(med), identityOf) === 0;
}

/** Index in `recent` of the report that decides a medication's dose scheduled at `scheduled` (the same instant), or -1. */
function reportOf(recent: readonly Dose[], med: Pick<Dose, "rxnorm_cui" | "medication_name">, scheduled: string): number {
  const ms = timeMs(scheduled);
  for (let i = recent.length - 1; i >= 0; i--) {
    const d = recent[i]!;
    if (d.superseded_by === null && reportsDose(d, med, ms)) return i;
  }
  return -1;
}

function applyDoses(s: ModuleState<AdherenceDoc>, log: LogOf<"medication_adherence">, ctx: ModuleContext): ModuleState<AdherenceDoc> {
  const meds = ctx.read("medications");
  let { medications, recent } = s.doc;
  for (const d of items(log.payload.medication_adherence)) {
    const status = oneOf(d.status, STATUSES);
    if (status === undefined) continue;
    const ref = { rxnorm_cui: text(d.rxnorm_cui) ?? null, medication_name: text(d.medication_name) ?? null };
    if (!ref.rxnorm_cui && !ref.medication_name) continue;
    const listed = findMedication(meds, ref);
    const rxnorm_cui = ref.rxnorm_cui ?? listed?.rxnorm_cui ?? null;
    const medication_name = ref.medication_name ?? listed?.medication_name ?? null;
    const window = listed?.adherence_window_minutes ?? DEFAULT_ADHERENCE_WINDOW_MINUTES;
    const scheduled = text(d.scheduled_time) ?? null;
    const deviationMs = scheduled === null ? NaN : timeMs(log.timestamp) - timeMs(scheduled);
    const deviation = Number.isNaN(deviationMs) ? null : Math.round(deviationMs / 60_000);
    const on_time = status === "taken" && deviation !== null ? Math.abs(deviationMs) <= window * 60_000 : null;
    const timing = on_time === null ? null : on_time ? "on_time" : deviationMs < 0 ? "early" : "late";
    // The fold runs in event-time order: a report already kept for this dose came before this one, which decides it now.
    const j = scheduled === null ? -1 : reportOf(recent, { rxnorm_cui, medication_name }, scheduled);
    const earlier = j >= 0 ? recent[j]! : undefined;
    if (earlier) recent = replaceAt(recent, j, { ...earlier, superseded_by: log.id });
    const dose: Dose = {
      timestamp: log.timestamp, log_id: log.id, medication_name, rxnorm_cui, status, scheduled_time: scheduled,
      dose_amount: finite(d.dose_amount) ?? null, dose_unit: text(d.dose_unit) ?? null,
      deviation_minutes: deviation, window_minutes: window, on_time, timing,
      superseded_by: null, repeat: earlier?.status === "taken" && status === "taken",
    };
    recent = insertSorted(recent, dose, RECENT);
    const at = findByIdentity(medications, identityOf({ rxnorm_cui, medication_name }), identityOf);
    const prev: MedicationAdherence = at >= 0 ? medications[at]! : {
      medication_name, rxnorm_cui, taken: 0, skipped: 0, on_time: 0, early: 0, late: 0, repeated: 0, last_status: status,
      first_event_at: log.timestamp, last_event_at: log.timestamp, last_taken_at: null,
    };
    const isLast = at < 0 || maxTime(prev.last_event_at, log.timestamp) === log.timestamp;
    const counts = tally(earlier ? tally(prev, earlier, -1) : prev, dose, 1);
    medications = replaceAt(medications, at, {
      medication_name: prev.medication_name ?? medication_name,
      rxnorm_cui: prev.rxnorm_cui ?? rxnorm_cui,
      ...counts,
      repeated: prev.repeated + (dose.repeat ? 1 : 0),
      last_status: isLast ? status : prev.last_status,
      first_event_at: minTime(prev.first_event_at, log.timestamp),
      last_event_at: maxTime(prev.last_event_at, log.timestamp),
      last_taken_at: status === "taken" ? maxTime(prev.last_taken_at ?? log.timestamp, log.timestamp) : prev.last_taken_at,
    });
  }
  return withDoc(s, recent === s.doc.recent ? s.doc : { ...s.doc, medications, recent });
}

function applyAdverse(s: ModuleState<AdherenceDoc>, log: LogOf<"medication_adverse_event">, ctx: ModuleContext): ModuleState<AdherenceDoc> {
  const meds = ctx.read("medications");
  let adverse_events = s.doc.adverse_events;
  for (const e of items(log.payload.events)) {
    const id = text(e.medication_identifier);
    if (id === undefined) continue;
    // The identifier is a CUI or a name; try it as both.
    const listed = findMedication(meds, { rxnorm_cui: id }) ?? findMedication(meds, { medication_name: id });
    adverse_events = insertSorted(adverse_events, {
      timestamp: log.timestamp, log_id: log.id, medication_identifier: id,
      medication_name: listed?.medication_name ?? null, rxnorm_cui: listed?.rxnorm_cui ?? null,
      description: text(e.description) ?? null, severity: text(e.severity) ?? null,
      onset_date: text(e.onset_date) ?? null, recorded_at: text(e.recorded_at) ?? null,
    }, RECENT);
  }
  return withDoc(s, adverse_events === s.doc.adverse_events ? s.doc : { ...s.doc, adverse_events });
}

/**
 * Every adherence log and every medication list update moves "now" for the schedule (the
 * latest event time the fold has seen), so the schedule is laid out again: scheduled times
 * whose window closed without a report become unreported. A list update counts too, or a
 * patient who stopped reporting doses would read as adherent up to their last report; it
 * is laid out on the list the update made, so a listing's doses due by its own time count.
 */
function scheduleOf(doc: AdherenceDoc, log: AdherenceLog, ctx: ModuleContext): { schedule: MedicationSchedule[]; history: readonly ScheduleHistory[] } {
  return scheduleUntil(doc, ctx.readAfter("medications"), horizonOf(doc.schedule, log.timestamp), ctx.timezone);
}

/**
 * The schedules laid out up to `until`: the fold's own "now", or a later time of reading,
 * so that doses due since the last report read as not reported (views do this).
 */
export function scheduleUntil(doc: AdherenceDoc, meds: Readonly<MedicationsDoc> | undefined, until: string, tz: string): { schedule: MedicationSchedule[]; history: readonly ScheduleHistory[] } {
  const firstDoseAt = (m: Medication) => {
    const at = findByIdentity(doc.medications, identityOf(m), identityOf);
    return at >= 0 ? doc.medications[at]!.first_event_at : undefined;
  };
  const ended = endedMedications(doc.removed ?? [], until);
  // A removed medication's history is kept with it: its doses before a change of times stay on the old ones.
  const unlisted = unlistedMedications(ended, meds);
  const tracked = unlisted.length === 0 ? meds : { medications: [...(meds?.medications ?? []), ...unlisted] };
  const history = observeSchedules(doc.schedule_history, tracked, until);
  return { schedule: trackSchedules(meds, doc.recent, doc.recent.length >= RECENT, firstDoseAt, until, tz, history, ended), history };
}

function applyLog(s: ModuleState<AdherenceDoc>, log: AdherenceLog, ctx: ModuleContext): ModuleState<AdherenceDoc> {
  switch (log.log_type) {
    case "medication_adherence":
      return applyDoses(s, log, ctx);
    case "medication_adverse_event":
      return applyAdverse(s, log, ctx);
    case "medication_list_update": {
      // The list itself is the medications module's; this keeps what a removal would lose.
      const before = ctx.read("medications");
      const removed = noteRemovals(endedMedications(s.doc.removed ?? [], log.timestamp), before, log);
      return withDoc(s, removed === s.doc.removed ? s.doc : { ...s.doc, removed: removed as RemovedMedication[] });
    }
  }
}

export const adherence: ReadModel<"adherence", AdherenceDoc, (typeof handles)[number]> = {
  key: "adherence",
  kind: "event",
  version: 7,
  handles,
  reads: ["medications"],
  initial: () => ({ medications: [], recent: [], adverse_events: [], schedule: [], schedule_history: [], removed: [] }),
  evolve: (s, log, ctx) => {
    const next = applyLog(s, log, ctx);
    const { schedule, history } = scheduleOf(next.doc, log, ctx);
    // Nothing scheduled before or now: leave the document alone, so a log that changed nothing reports no change.
    if (schedule.length === 0 && next.doc.schedule.length === 0 && history === next.doc.schedule_history) return next;
    return withDoc(next, { ...next.doc, schedule, schedule_history: history as ScheduleHistory[] });
  },
};
