import { addStat, upsertDay, type Stat } from "../../lib/daily.js";
import { insertSorted, RECENT } from "../../lib/lists.js";
import { finite, round, str, text } from "../../lib/payload.js";
import { addDays, cmpTime, dayOf, dayStart, utcInstant } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

/**
 * The international consensus on CGM metrics (Battelino et al., Diabetes Care 2019): in
 * range 70-180 mg/dL; below 70 (level 1 and 2) and below 54 (level 2); above 180 and above
 * 250. Every count is taken from the reading's value, never from a device's flag.
 */
export const CGM_THRESHOLDS = { veryLow: 54, low: 70, high: 180, veryHigh: 250 } as const;
export const TARGET_LOW_MG_DL = CGM_THRESHOLDS.low;
export const TARGET_HIGH_MG_DL = CGM_THRESHOLDS.high;
/**
 * Coverage is counted in 15-minute slots (the longest interval common CGMs report at) of
 * the patient's local day, from its first instant: 96 on most days, 92 on the day clocks go
 * forward an hour and 100 on the day they go back.
 */
export const SLOT_MINUTES = 15;
const SLOT_MS = SLOT_MINUTES * 60_000;
export const SLOTS_PER_DAY = (24 * 60) / SLOT_MINUTES;

export interface GlucoseDay {
  /** YYYY-MM-DD: local_date when given, else sensor_timestamp's date in the patient's timezone. */
  date: string;
  glucose_mg_dl: Stat | null;
  /** Sum of the squared values: with the Stat's sum and count, the standard deviation of any set of days. */
  sum_squares: number;
  readings: number;
  /** Readings below 70 mg/dL (those below 54 included). */
  low: number;
  /** Readings below 54 mg/dL. */
  very_low: number;
  /** Readings of 70-180 mg/dL. */
  in_range: number;
  /** Readings above 180 mg/dL (those above 250 included). */
  high: number;
  /** Readings above 250 mg/dL. */
  very_high: number;
  /** in_range / readings, percent, 1 decimal. */
  time_in_range_percent: number;
  /**
   * The day's 15-minute slots with at least one reading, as a bitmap: slot k is the k-th
   * quarter hour from the local day's first instant (elapsed time, so a 25-hour day's
   * repeated hour has slots of its own), bit k % 4 of hex digit k / 4; day_slots / 4 digits
   * (rounded up), empty before the first reading that marks one.
   */
  slots: string;
  /** How many 15-minute slots the local day has: 96, or 92 / 100 on a day the clocks change an hour. */
  day_slots: number;
  /** Of the day's day_slots slots, how many hold a reading. */
  covered_slots: number;
}

export interface GlucoseReading {
  timestamp: string;
  log_id: string;
  sensor_timestamp: string | null;
  glucose_mg_dl: number;
  trend_arrow: string | null;
  /** From the value against 70-180 mg/dL; what the device said is device_flag. */
  glucose_flag: "low" | "normal" | "high";
  /** The glucose_flag the device sent (low, normal or high), else null: kept, never counted. */
  device_flag: "low" | "normal" | "high" | null;
  device_provider: string | null;
}

export interface GlucoseDoc {
  /** Daily rollups, ascending by date, the last 90 days. */
  days: GlucoseDay[];
  /** The last 50 readings by event time. */
  recent: GlucoseReading[];
  /** The reading taken last, by sensor_timestamp (else the log's timestamp). */
  latest: GlucoseReading | null;
}

/** When a reading was taken. A receiver uploads backfilled readings late, so the log's timestamp can be long after. */
const takenAt = (r: GlucoseReading) => (r.sensor_timestamp === null ? r.timestamp : utcInstant(r.sensor_timestamp));

const flagOf = (v: number): GlucoseReading["glucose_flag"] => (v < CGM_THRESHOLDS.low ? "low" : v > CGM_THRESHOLDS.high ? "high" : "normal");
const deviceFlag = (flag: unknown): GlucoseReading["device_flag"] => (flag === "low" || flag === "normal" || flag === "high" ? flag : null);

/** How many 15-minute slots a local date has in a zone (a part slot counts whole). */
export function daySlots(date: string, timeZone: string): number {
  const ms = dayStart(addDays(date, 1), timeZone) - dayStart(date, timeZone);
  return Number.isNaN(ms) ? SLOTS_PER_DAY : Math.ceil(ms / SLOT_MS);
}

/**
 * The day's slot bitmap with the reading's slot set, and whether it was new. A reading
 * put on a day (by a local_date) it was not taken in, in the patient's zone, marks none.
 */
function markSlot(d: GlucoseDay, taken: string, timeZone: string): { slots: string; added: boolean } {
  const slot = Math.floor((Date.parse(taken) - dayStart(d.date, timeZone)) / SLOT_MS);
  if (!(slot >= 0 && slot < d.day_slots)) return { slots: d.slots, added: false };
  const digits = d.slots.padEnd(Math.ceil(d.day_slots / 4), "0").split("");
  const at = Math.floor(slot / 4);
  const bit = 1 << (slot % 4);
  const was = parseInt(digits[at]!, 16);
  if (was & bit) return { slots: d.slots, added: false };
  digits[at] = (was | bit).toString(16);
  return { slots: digits.join(""), added: true };
}

export const handles = ["cgm_reading"] as const;

export const glucose: ReadModel<"glucose", GlucoseDoc, "cgm_reading"> = {
  key: "glucose",
  kind: "event",
  version: 4,
  handles,
  reads: [],
  initial: () => ({ days: [], recent: [], latest: null }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const value = finite(p.glucose_mg_dl);
    if (value === undefined) return s;
    const sensor = text(p.sensor_timestamp) ?? null;
    // local_date is not a cgm_reading field of the catalog, but a reading that carries one is put on that day, as every device reading is.
    const date = dayOf(str(p, "local_date"), sensor ?? log.timestamp, ctx.timezone);
    const reading: GlucoseReading = {
      timestamp: log.timestamp, log_id: log.id, sensor_timestamp: sensor, glucose_mg_dl: value,
      trend_arrow: text(p.trend_arrow) ?? null, glucose_flag: flagOf(value), device_flag: deviceFlag(p.glucose_flag),
      device_provider: text(p.device_provider) ?? null,
    };
    const t = CGM_THRESHOLDS;
    const days = upsertDay(
      s.doc.days,
      date,
      () => ({ date, glucose_mg_dl: null, sum_squares: 0, readings: 0, low: 0, very_low: 0, in_range: 0, high: 0, very_high: 0, time_in_range_percent: 0, slots: "",
        day_slots: daySlots(date, ctx.timezone), covered_slots: 0 }),
      (d) => {
        const mark = markSlot(d, takenAt(reading), ctx.timezone);
        const next = {
          ...d, glucose_mg_dl: addStat(d.glucose_mg_dl, value), sum_squares: d.sum_squares + value * value, readings: d.readings + 1,
          low: d.low + (value < t.low ? 1 : 0), very_low: d.very_low + (value < t.veryLow ? 1 : 0),
          high: d.high + (value > t.high ? 1 : 0), very_high: d.very_high + (value > t.veryHigh ? 1 : 0),
          in_range: d.in_range + (value >= t.low && value <= t.high ? 1 : 0),
          slots: mark.slots, covered_slots: d.covered_slots + (mark.added ? 1 : 0),
        };
        next.time_in_range_percent = round((next.in_range / next.readings) * 100, 1);
        return next;
      },
    );
    const latest = s.doc.latest && cmpTime(takenAt(s.doc.latest), takenAt(reading)) > 0 ? s.doc.latest : reading;
    return withDoc(s, { days, recent: insertSorted(s.doc.recent, reading, RECENT), latest });
  },
};

/** The consensus CGM metrics of a set of days (a view's window). Percentages of readings, 1 decimal. */
export interface CgmMetrics {
  readings: number;
  /**
   * Share of the period's 15-minute slots that hold a reading (the consensus asks for 70 %
   * over 14 days): of all its local days' slots, 92 or 100 on a day the clocks change.
   */
  coverage_percent: number;
  time_in_range_percent: number;
  below_70_percent: number;
  below_54_percent: number;
  above_180_percent: number;
  above_250_percent: number;
  mean_mg_dl: number;
  /** Glucose management indicator: 3.31 + 0.02392 x mean mg/dL (Bergenstal et al. 2018). */
  gmi_percent: number;
  /** Coefficient of variation: standard deviation / mean; null with one reading. */
  cv_percent: number | null;
}

/** A period of local days, first to last, in the patient's zone (a view's Window is one). */
export interface CgmPeriod {
  firstDay: string;
  lastDay: string;
  tz: string;
}

/** Bound on the days a period's slots are summed over: a view asks for 7 or 14. */
const MAX_PERIOD_DAYS = 366;

/** The 15-minute slots of the period's days, whether or not each holds readings. */
export function periodSlots(p: CgmPeriod): number {
  let n = 0;
  for (let d = p.firstDay, k = 0; d <= p.lastDay && k < MAX_PERIOD_DAYS; k++) {
    n += daySlots(d, p.tz);
    const next = addDays(d, 1);
    // A text that is no date has no next day.
    if (next === d) break;
    d = next;
  }
  return n;
}

/** The metrics of `days`, those of `period` a view has; coverage counts against all the period's slots. */
export function cgmMetrics(days: readonly GlucoseDay[], period: CgmPeriod): CgmMetrics | null {
  let n = 0, sum = 0, squares = 0, low = 0, veryLow = 0, high = 0, veryHigh = 0, inRange = 0, slots = 0;
  for (const d of days) {
    if (!d.glucose_mg_dl) continue;
    n += d.readings;
    sum += d.glucose_mg_dl.sum;
    squares += d.sum_squares;
    low += d.low;
    veryLow += d.very_low;
    high += d.high;
    veryHigh += d.very_high;
    inRange += d.in_range;
    slots += d.covered_slots;
  }
  if (n === 0) return null;
  const pct = (k: number) => round((k / n) * 100, 1);
  const mean = sum / n;
  const sd = n > 1 ? Math.sqrt(Math.max(0, (squares - (sum * sum) / n) / (n - 1))) : null;
  return {
    readings: n,
    coverage_percent: round(Math.min(100, (slots / Math.max(1, periodSlots(period))) * 100), 1),
    time_in_range_percent: pct(inRange),
    below_70_percent: pct(low),
    below_54_percent: pct(veryLow),
    above_180_percent: pct(high),
    above_250_percent: pct(veryHigh),
    mean_mg_dl: round(mean, 1),
    gmi_percent: round(3.31 + 0.02392 * mean, 1),
    cv_percent: sd === null ? null : round((sd / mean) * 100, 1),
  };
}
