/**
 * The ambulatory glucose profile's numbers, from raw CGM readings: pure, so the chart and
 * its text alternative show the same figures. Thresholds are the international consensus
 * (Battelino et al., Diabetes Care 2019), as readmodels/modules/glucose counts them.
 */
export const THRESHOLDS = { veryLow: 54, low: 70, high: 180, veryHigh: 250 } as const;
/** Bins of the day, 15 minutes each (the longest interval common CGMs report at). */
export const BIN_MINUTES = 15;
export const BINS = (24 * 60) / BIN_MINUTES;
/** Each bin pools the readings of this many bins either side, as the AGP smooths its curves. */
const POOL = 2;

export interface Reading {
  /** Epoch ms of the sensor time. */
  at: number;
  mg_dl: number;
}

export interface TimeInRange {
  /** Percent of readings, 1 decimal, in the consensus's five ranges. */
  very_low: number;
  low: number;
  in_range: number;
  high: number;
  very_high: number;
}

export interface Profile {
  readings: number;
  days: string[];
  /** Per bin (BINS of them, from local midnight): the 5th, 25th, 50th, 75th and 95th percentiles, null where no reading. */
  p5: (number | null)[];
  p25: (number | null)[];
  p50: (number | null)[];
  p75: (number | null)[];
  p95: (number | null)[];
  /** Per local date (ascending), each bin's reading (the bin's mean when several), null where none: the daily overlay. */
  daily: (number | null)[][];
  tir: TimeInRange;
  mean_mg_dl: number;
  /** Glucose management indicator: 3.31 + 0.02392 x mean mg/dL (Bergenstal et al. 2018). */
  gmi_percent: number;
  /** Standard deviation / mean, percent; null with one reading. */
  cv_percent: number | null;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Linear interpolation between closest ranks (type 7) of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  const at = (sorted.length - 1) * p;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export function timeInRange(values: readonly number[]): TimeInRange {
  const t = THRESHOLDS;
  let veryLow = 0, low = 0, inRange = 0, high = 0, veryHigh = 0;
  for (const v of values) {
    if (v < t.veryLow) veryLow++;
    else if (v < t.low) low++;
    else if (v <= t.high) inRange++;
    else if (v <= t.veryHigh) high++;
    else veryHigh++;
  }
  const pct = (k: number) => (values.length === 0 ? 0 : round1((k / values.length) * 100));
  return { very_low: pct(veryLow), low: pct(low), in_range: pct(inRange), high: pct(high), very_high: pct(veryHigh) };
}

/**
 * The local date and minute of the day of an instant, in a time zone. The zone's offset is
 * asked of Intl once per quarter hour of UTC (offsets are whole quarters and change on a
 * quarter's start: Adelaide's at 15:30 UTC, say), since formatting each of thousands of
 * readings is the slow part.
 */
export function localClock(timeZone: string): (ms: number) => { date: string; minute: number } {
  const f = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  const offsets = new Map<number, number>();
  const offsetAt = (ms: number) => {
    const quarter = Math.floor(ms / 900_000);
    let off = offsets.get(quarter);
    if (off === undefined) {
      const p = Object.fromEntries(f.formatToParts(quarter * 900_000).map((x) => [x.type, x.value]));
      off = Date.UTC(+p.year!, +p.month! - 1, +p.day!, +p.hour!, +p.minute!) - quarter * 900_000;
      offsets.set(quarter, off);
    }
    return off;
  };
  return (ms) => {
    const local = new Date(ms + offsetAt(ms));
    return { date: local.toISOString().slice(0, 10), minute: local.getUTCHours() * 60 + local.getUTCMinutes() };
  };
}

/** The profile of readings in a time zone; null without any. */
export function glucoseProfile(readings: readonly Reading[], timeZone: string): Profile | null {
  if (readings.length === 0) return null;
  const clock = localClock(timeZone);
  const bins: number[][] = Array.from({ length: BINS }, () => []);
  const byDay = new Map<string, { sum: number[]; n: number[] }>();
  let sum = 0, squares = 0;
  for (const r of readings) {
    const { date, minute } = clock(r.at);
    const bin = Math.floor(minute / BIN_MINUTES);
    bins[bin]!.push(r.mg_dl);
    let day = byDay.get(date);
    if (!day) byDay.set(date, (day = { sum: new Array<number>(BINS).fill(0), n: new Array<number>(BINS).fill(0) }));
    day.sum[bin]! += r.mg_dl;
    day.n[bin]! += 1;
    sum += r.mg_dl;
    squares += r.mg_dl * r.mg_dl;
  }
  const p: Record<"p5" | "p25" | "p50" | "p75" | "p95", (number | null)[]> = { p5: [], p25: [], p50: [], p75: [], p95: [] };
  for (let b = 0; b < BINS; b++) {
    const pooled: number[] = [];
    for (let k = -POOL; k <= POOL; k++) pooled.push(...bins[(b + k + BINS) % BINS]!);
    pooled.sort((x, y) => x - y);
    const q = (f: number) => (pooled.length === 0 ? null : round1(percentile(pooled, f)));
    p.p5.push(q(0.05));
    p.p25.push(q(0.25));
    p.p50.push(q(0.5));
    p.p75.push(q(0.75));
    p.p95.push(q(0.95));
  }
  const days = [...byDay.keys()].sort();
  const daily = days.map((d) => {
    const day = byDay.get(d)!;
    return day.sum.map((s, i) => (day.n[i]! === 0 ? null : s / day.n[i]!));
  });
  const n = readings.length;
  const mean = sum / n;
  const sd = n > 1 ? Math.sqrt(Math.max(0, (squares - (sum * sum) / n) / (n - 1))) : null;
  return {
    readings: n, days, ...p, daily,
    tir: timeInRange(readings.map((r) => r.mg_dl)),
    mean_mg_dl: round1(mean),
    gmi_percent: round1(3.31 + 0.02392 * mean),
    cv_percent: sd === null ? null : round1((sd / mean) * 100),
  };
}

/** "HH:MM" of a minute of the day. */
export const clockLabel = (minute: number) => `${String(Math.floor(minute / 60) % 24).padStart(2, "0")}:${String(minute % 60).padStart(2, "0")}`;
