import { DAYS } from "./lists.js";
import { round } from "./payload.js";

/** Running statistics of one measure over a day. `mean` is sum / count, rounded to 2 decimals. */
export interface Stat {
  count: number;
  sum: number;
  mean: number;
  min: number;
  max: number;
}

export function addStat(s: Stat | null, x: number | undefined): Stat | null {
  if (x === undefined) return s;
  if (s === null) return { count: 1, sum: x, mean: round(x), min: x, max: x };
  const count = s.count + 1;
  const sum = s.sum + x;
  return { count, sum, mean: round(sum / count), min: Math.min(s.min, x), max: Math.max(s.max, x) };
}

/**
 * The statistics with one reading `was` replaced by `now` (a measurement corrected). Count,
 * sum and mean are exact; min and max are exact when `others` holds the day's other readings
 * (count - 1 of them), else `was` may still bound them as the running statistics cannot forget it.
 */
export function replaceInStat(s: Stat, was: number, now: number, others: readonly number[]): Stat {
  if (others.length !== s.count - 1) {
    const sum = s.sum - was + now;
    return { count: s.count, sum, mean: round(sum / s.count), min: Math.min(s.min, now), max: Math.max(s.max, now) };
  }
  return [...others, now].reduce<Stat | null>(addStat, null)!;
}

export function addNum(a: number | null, x: number | undefined): number | null {
  return x === undefined ? a : (a ?? 0) + x;
}

/**
 * Updates the rollup of one day in a list kept sorted by date and bounded to the last
 * `max` days; a day older than the window is dropped, whatever order it arrived in.
 */
export function upsertDay<D extends { date: string }>(
  days: readonly D[],
  date: string,
  blank: () => D,
  update: (d: D) => D,
  max = DAYS,
): D[] {
  const i = days.findIndex((d) => d.date === date);
  const day = days[i];
  const out = [...days];
  if (day !== undefined) out[i] = update(day);
  else {
    let at = out.length;
    while (at > 0 && out[at - 1]!.date > date) at--;
    out.splice(at, 0, update(blank()));
  }
  return out.length > max ? out.slice(out.length - max) : out;
}
