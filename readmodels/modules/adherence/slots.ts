/**
 * Scheduled instants: a wall-clock time of day in a zone, as epoch ms, for each local day of
 * a range. Cached, as consecutive logs of a patient ask for the same days again.
 */
import { addDays, offsetAt } from "../../lib/time.js";

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
export const TIME_RE = /^([01]\d|2[0-3]):([0-5]\d)$/;
export const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})/;

// Scheduled instants: the caches hold no state that changes results.
const wallToUtc = new Map<string, Slot>();
const nextDay = new Map<string, string>();
const rangeCache = new Map<string, readonly Slot[]>();
const CACHE_MAX = 50_000;

/** A scheduled instant: epoch ms and its ISO text (both wanted, and toISOString is costly enough to keep). */
export interface Slot {
  ms: number;
  iso: string;
}

/**
 * Epoch ms of a wall-clock time in a zone. A time the zone repeats (fall back) is its first
 * occurrence; a time it skips (spring forward) reads with the offset before the jump
 * (02:30 → 03:30 after the change).
 */
export function zonedMs(date: string, hhmm: string, tz: string): number {
  return zoned(date, hhmm, tz)?.ms ?? NaN;
}

function zoned(date: string, hhmm: string, tz: string): Slot | undefined {
  const key = `${tz} ${date} ${hhmm}`;
  const hit = wallToUtc.get(key);
  if (hit !== undefined) return hit;
  const d = DATE_RE.exec(date);
  const t = TIME_RE.exec(hhmm);
  if (!d || !t) return undefined;
  const wall = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(t[1]), Number(t[2]));
  // The zone's offset at a first guess, then at the instant it gives; they differ only near a change.
  const o1 = offsetAt(wall, tz);
  const o2 = offsetAt(wall - o1, tz);
  const ms = o1 === o2 || offsetAt(wall - o2, tz) === o2 ? wall - o2 : Math.max(wall - o1, wall - o2);
  if (Number.isNaN(ms)) return undefined;
  if (wallToUtc.size > CACHE_MAX) wallToUtc.clear();
  const slot = { ms, iso: new Date(ms).toISOString() };
  wallToUtc.set(key, slot);
  return slot;
}

function dayAfter(date: string): string {
  let next = nextDay.get(date);
  if (next === undefined) {
    next = addDays(date, 1);
    if (nextDay.size > CACHE_MAX) nextDay.clear();
    nextDay.set(date, next);
  }
  return next;
}

/** A day's scheduled instants, ascending (a day the zone changes on may give two times one instant). */
export function daySlots(date: string, times: readonly string[], tz: string): Slot[] {
  return times.map((t) => zoned(date, t, tz)).filter((x): x is Slot => x !== undefined).sort((a, b) => a.ms - b.ms);
}

/**
 * Scheduled instants (ascending, unique) of the days from the UTC date of `from` − 1 to
 * that of `to` + 1: every local day that overlaps [from, to], whatever the zone. Kept per
 * range, as consecutive logs mostly ask for the same one.
 */
export function slotsBetween(times: readonly string[], from: number, to: number, tz: string): readonly Slot[] {
  const first = iso(from - DAY_MS).slice(0, 10);
  const last = iso(to + DAY_MS).slice(0, 10);
  const key = `${tz} ${first} ${last} ${times.join(",")}`;
  const hit = rangeCache.get(key);
  if (hit) return hit;
  const out: Slot[] = [];
  for (let date = first; date <= last; date = dayAfter(date)) {
    for (const slot of daySlots(date, times, tz)) if (out.length === 0 || slot.ms > out[out.length - 1]!.ms) out.push(slot);
  }
  if (rangeCache.size > 1000) rangeCache.clear();
  rangeCache.set(key, out);
  return out;
}

/** Index of the slot nearest `t` (-1 when none); halfway between two goes to the earlier (a late dose is likelier than a very early one). */
export function nearest(slots: readonly Slot[], t: number): number {
  let lo = 0;
  let hi = slots.length;
  // The first slot at or after t.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (slots[mid]!.ms < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo === slots.length) return lo - 1;
  return lo > 0 && t - slots[lo - 1]!.ms <= slots[lo]!.ms - t ? lo - 1 : lo;
}
