/**
 * What a clinician must look at: vital signs and device readings out of the usual adult
 * range, and missed doses, between two times. Pure, over one folded state; the provider
 * alert and the changes read (get_changes) both say these, each in its own words.
 */
import { doc } from "./views/lib.js";
import { GLUCOSE_HIGH, GLUCOSE_LOW, SPO2_LOW } from "./views/device.js";
import { listingOf, schedulesAt } from "./views/medication.js";
import type { Dose, MedicationSchedule, ScheduledDose } from "./modules/adherence/index.js";
import type { Medication } from "./modules/medications/index.js";
import type { VitalsEntry } from "./modules/vitals/index.js";
import { rangeIn, type LabValue } from "./modules/lab_results/index.js";
import type { PatientState } from "./patient-state.js";

/** One dated finding, said in one line, with the logs it comes from. */
export interface Finding {
  timestamp: string;
  line: string;
  log_ids: string[];
}

const formatters = new Map<string, Intl.DateTimeFormat>();
/** "2026-07-02 08:00" in the patient's zone: the clock the patient took the dose by. */
export function localClock(iso: string, tz: string): string {
  let f = formatters.get(tz);
  if (!f) formatters.set(tz, (f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })));
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : f.format(ms).replace(",", "");
}

/** "reference 3.5–5.1", "reference ≤ 3", "reference ≥ 60": a missing bound is said, not printed empty. */
export function referenceText(low: number | null, high: number | null): string {
  if (low !== null && high !== null) return `, reference ${low}–${high}`;
  if (high !== null) return `, reference ≤ ${high}`;
  if (low !== null) return `, reference ≥ ${low}`;
  return "";
}

/** A lab value's reference text: its test's range in the value's own unit, as a range in another unit says nothing about it. */
export function labReferenceText(r: Parameters<typeof rangeIn>[0], v: Pick<LabValue, "unit">): string {
  const g = rangeIn(r, v.unit);
  return g ? referenceText(g.low, g.high) : "";
}

/**
 * Vital signs out of the usual adult range (stated in the alert): fever from 37.8 °C,
 * tachycardia above 100 bpm, and so on. They flag a value for a clinician to look at, not a
 * diagnosis.
 */
export const VITAL_LIMITS: Record<string, { label: string; unit: string; low?: number; high?: number }> = {
  temperature_celsius: { label: "Temperature", unit: "°C", low: 35, high: 37.8 },
  heart_rate_bpm: { label: "Heart rate", unit: "bpm", low: 50, high: 100 },
  systolic_bp_mmhg: { label: "Systolic BP", unit: "mmHg", low: 90, high: 160 },
  diastolic_bp_mmhg: { label: "Diastolic BP", unit: "mmHg", low: 60, high: 100 },
  spo2_percent: { label: "SpO2", unit: "%", low: 92 },
  respiratory_rate_bpm: { label: "Respiratory rate", unit: "breaths/min", low: 10, high: 24 },
};

export const LIMITS_TEXT = [
  ...Object.values(VITAL_LIMITS).map((l) => `${l.label} ${[l.low !== undefined && `below ${l.low}`, l.high !== undefined && `above ${l.high}`].filter(Boolean).join(" or ")} ${l.unit}`),
  `CGM glucose below ${GLUCOSE_LOW} or above ${GLUCOSE_HIGH} mg/dL`, `device SpO2 below ${SPO2_LOW}%`,
].join("; ");

/**
 * Measurements out of VITAL_LIMITS taken `inRange` (the caller's window: the alert's
 * `atOrAfter(since)`, get_changes' half-open window).
 */
export function vitalsOutOfRange(state: PatientState, inRange: (ts: string) => boolean): Finding[] {
  return entriesOutOfRange((doc(state, "vitals")?.history ?? []).filter((x) => inRange(x.timestamp)));
}

/** Measurements of `entries` out of VITAL_LIMITS, one finding per entry. */
export function entriesOutOfRange(entries: readonly VitalsEntry[]): Finding[] {
  const out: Finding[] = [];
  for (const h of entries) {
    // In VITAL_LIMITS' order, whatever order the log listed them in.
    const bad = Object.entries(VITAL_LIMITS).flatMap(([k, l]) => {
      const v = h.measurements[k];
      if (v === undefined || !((l.low !== undefined && v < l.low) || (l.high !== undefined && v > l.high))) return [];
      return [`${l.label} ${v} ${l.unit}`];
    });
    if (bad.length) out.push({ timestamp: h.timestamp, line: bad.join(", "), log_ids: [h.log_id] });
  }
  return out;
}

/** CGM glucose and device SpO2 out of range, read `inRange` (as vitalsOutOfRange). */
export function deviceOutOfRange(state: PatientState, inRange: (ts: string) => boolean): Finding[] {
  const glucose = (doc(state, "glucose")?.recent ?? [])
    .filter((r) => inRange(r.timestamp) && (r.glucose_mg_dl < GLUCOSE_LOW || r.glucose_mg_dl > GLUCOSE_HIGH))
    .map((r) => ({ timestamp: r.timestamp, line: `CGM glucose ${r.glucose_mg_dl} mg/dL`, log_ids: [r.log_id] }));
  const spo2 = (doc(state, "heart")?.recent ?? [])
    .filter((e) => e.kind === "spo2" && inRange(e.timestamp) && typeof e.values.spo2_percent === "number" && e.values.spo2_percent < SPO2_LOW)
    .map((e) => ({ timestamp: e.timestamp, line: `device SpO2 ${String(e.values.spo2_percent)}%`, log_ids: [e.log_id] }));
  return [...glucose, ...spo2];
}

/** `ts` at or after `since`, as instants: the provider alert's window. */
export const atOrAfter = (since: string) => (ts: string): boolean => Date.parse(ts) >= Date.parse(since);

/** A medication's scheduled doses with no report, and the listing its schedule comes from. */
export interface UnreportedDoses {
  schedule: MedicationSchedule;
  /** Ascending by scheduled time; never empty. */
  doses: ScheduledDose[];
  /** The listed medication, by the schedule's own identity (keyOf); once off the list, the listing its removal ended. */
  listing: Medication | undefined;
}

/**
 * Doses reported skipped with a report time `inRange`, and per medication schedule as it
 * stands at `at` (laid out over the 7 days before it) the doses scheduled `inRange` that
 * got no report: a patient who stops reporting is not adherent.
 */
export function findMissedDoses(state: PatientState, at: string, inRange: (ts: string) => boolean): { skipped: Dose[]; unreported: UnreportedDoses[] } {
  // A skip a later report of the dose superseded (taken after all) is no missed dose.
  const skipped = (doc(state, "adherence")?.recent ?? []).filter((d) => d.status === "skipped" && d.superseded_by === null && inRange(d.timestamp));
  const unreported = schedulesAt(state, at).flatMap((schedule) => {
    const doses = schedule.doses.filter((d) => d.status === "unreported" && inRange(d.scheduled_time));
    return doses.length === 0 ? [] : [{ schedule, doses, listing: listingOf(state, schedule) }];
  });
  return { skipped, unreported };
}
