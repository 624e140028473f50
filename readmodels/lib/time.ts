/**
 * Time helpers. Everything here is a function of its arguments: dates in a timezone come
 * from Intl with an explicit zone, never from the machine's clock or zone.
 */
import { isCalendarDay } from "../../catalog/calendar.js";

/** Epoch ms of an ISO timestamp; NaN when unparsable. */
export function timeMs(iso: string): number {
  return Date.parse(iso);
}

const cmpText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** "YYYY-MM-DDTHH:mm:ss[.f…]Z" with every field in range except days 29-31 of short months. */
const Z_UTC = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,9})?Z$/;

const digit = (s: string, i: number): number => s.charCodeAt(i) - 48;

/**
 * For "YYYY-MM-DDTHH:mm:ss[.f…]Z" (the form of nearly every stamp the fold compares), the
 * milliseconds of its fraction when its text orders like its instant; -1 otherwise. Only
 * fields in range qualify: Date.parse reads "02-30" as March 2 and "T24:00" as the next
 * day, and refuses a 13th month or a 60th second; those take the slow path. Date.parse
 * keeps the first three digits of a fraction, and so does this. A regex test without
 * captures, then digits by char code: this runs for nearly every comparison of the fold.
 */
function orderedUtcMs(s: string): number {
  if (!Z_UTC.test(s)) return -1;
  // The regex admits days up to 31 in every month; past 28, check the calendar.
  const day = digit(s, 8) * 10 + digit(s, 9);
  if (day > 28 && !isCalendarDay(digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3), digit(s, 5) * 10 + digit(s, 6), day)) return -1;
  const n = s.length;
  if (n === 20) return 0;
  // ".f", ".ff", ".fff" or longer: the first three digits, padded.
  return digit(s, 20) * 100 + (n > 22 ? digit(s, 21) * 10 : 0) + (n > 23 ? digit(s, 22) : 0);
}

/**
 * Orders two ISO timestamps by instant. Strings are not compared directly because
 * "…00Z" and "…00.000Z" are the same instant. Unparsable values sort after parsable ones
 * and among themselves by text, so the order stays total. Two UTC stamps in range are
 * compared as text, without Date.parse: this runs for nearly every fold step.
 */
export function cmpTime(a: string, b: string): number {
  const ma = orderedUtcMs(a);
  const mb = ma < 0 ? -1 : orderedUtcMs(b);
  if (ma >= 0 && mb >= 0) {
    // Two stamps of one form with at most milliseconds ("…:ssZ", "…:ss.sssZ", what the
    // service stores) order as their whole text.
    if (a.length === b.length && a.length <= 24) return cmpText(a, b);
    // Else the first 19 characters (to the seconds) order as text, then the milliseconds.
    for (let k = 0; k < 19; k++) {
      const d = a.charCodeAt(k) - b.charCodeAt(k);
      if (d !== 0) return d < 0 ? -1 : 1;
    }
    return Math.sign(ma - mb);
  }
  const x = timeMs(a);
  const y = timeMs(b);
  const xn = Number.isNaN(x);
  const yn = Number.isNaN(y);
  if (xn || yn) return xn && yn ? cmpText(a, b) : xn ? 1 : -1;
  return x - y;
}

export function maxTime(a: string, b: string): string {
  return cmpTime(b, a) > 0 ? b : a;
}

export function minTime(a: string, b: string): string {
  return cmpTime(b, a) < 0 ? b : a;
}

/** Anything placed in a bounded list or kept as "latest": ordered by its timestamp. */
export interface Stamped {
  timestamp: string;
  log_id: string;
}

/**
 * Orders by timestamp only. On a tie the item the fold applied later counts as the later
 * one: callers insert after equals and let a newer item replace an equal one. The fold
 * runs in (event timestamp, acceptance) order, so that is the contract's order even when
 * `timestamp` is derived (a collection or sensor time): a log id would order two logs by
 * acceptance alone, and a corrected result accepted earlier than the preliminary it
 * corrects would lose to it.
 */
export function cmpStamped(a: Stamped, b: Stamped): number {
  return cmpTime(a.timestamp, b.timestamp);
}

// Formatters are costly to build; the cache holds no state that changes results.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    } catch {
      // An unknown zone should have been refused at patient creation; fall back to UTC.
      f = formatter("UTC");
    }
    formatters.set(timeZone, f);
  }
  return f;
}

const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const HOUR_MS = 3_600_000;
/** Earliest and latest instants whose dates the fast path writes (years 1000-9999 have four digits everywhere). */
const FAST_FROM = Date.UTC(1000, 0, 2);
const FAST_TO = Date.UTC(9999, 11, 30);
/** Per zone, per UTC hour (ms / HOUR_MS): the zone's offset in ms through that hour, or null when it changes within it. */
const hourOffsets = new Map<string, Map<number, number | null>>();
let hourOffsetCount = 0;
const wallClocks = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at `ms` (whole seconds), from its wall-clock time there; an unknown zone reads as UTC. */
export function offsetAt(ms: number, timeZone: string): number {
  let f = wallClocks.get(timeZone);
  if (!f) {
    // Same zone resolution as formatter(): an unknown zone reads as UTC.
    const zone = formatter(timeZone).resolvedOptions().timeZone;
    f = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    wallClocks.set(timeZone, f);
  }
  const at = Math.floor(ms / 1000) * 1000;
  const p = f.formatToParts(new Date(at));
  const n = (t: string) => Number(p.find((x) => x.type === t)?.value);
  return Date.UTC(n("year"), n("month") - 1, n("day"), n("hour"), n("minute"), n("second")) - at;
}

/** The zone's offset through the UTC hour holding `ms`, or null when it changes within that hour. */
function hourOffset(ms: number, timeZone: string): number | null {
  const hour = Math.floor(ms / HOUR_MS);
  let zone = hourOffsets.get(timeZone);
  let off = zone?.get(hour);
  if (off !== undefined) return off;
  // Transitions fall on whole seconds: one inside the hour shows at its last second.
  const first = offsetAt(hour * HOUR_MS, timeZone);
  off = first === offsetAt(hour * HOUR_MS + HOUR_MS - 1000, timeZone) ? first : null;
  // About 9,000 hours a year per zone: bounded, and rebuilt at a few microseconds an entry.
  if (++hourOffsetCount > 200_000) {
    hourOffsets.clear();
    hourOffsetCount = 1;
    zone = undefined;
  }
  if (!zone) {
    zone = new Map();
    hourOffsets.set(timeZone, zone);
  }
  zone.set(hour, off);
  return off;
}

/**
 * The calendar date (YYYY-MM-DD) of an instant in an IANA timezone. The device rollups
 * and every view call it per entry, and instants spread over a year hit a per-minute cache
 * rarely: the zone's offset is kept per UTC hour instead (Intl's formatToParts costs a few
 * microseconds a call), and Intl answers directly only inside an hour where the offset
 * changes, and outside years 1000-9999.
 */
export function localDate(iso: string, timeZone: string): string {
  // Stored timestamps are canonical UTC: in UTC the date is the first ten characters.
  if (timeZone === "UTC" && CANONICAL_UTC.test(iso)) return iso.slice(0, 10);
  const ms = timeMs(iso);
  if (Number.isNaN(ms)) return iso.slice(0, 10);
  if (ms >= FAST_FROM && ms <= FAST_TO) {
    const off = hourOffset(ms, timeZone);
    if (off !== null) return new Date(ms + off).toISOString().slice(0, 10);
  }
  return intlDate(ms, timeZone);
}

function intlDate(ms: number, timeZone: string): string {
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** A YYYY-MM-DD date `days` later (earlier when negative); a text that is no date stays as it is. */
export function addDays(date: string, days: number): string {
  const ms = Date.parse(`${date}T00:00:00Z`);
  return Number.isNaN(ms) ? date : new Date(ms + days * 86_400_000).toISOString().slice(0, 10);
}

/** The day a reading belongs to: the client's local_date when valid, else the instant's date in tz. */
export function dayOf(localDateField: string | undefined, instant: string, timeZone: string): string {
  return localDateField !== undefined && DATE_RE.test(localDateField) ? localDateField : localDate(instant, timeZone);
}

/** A zone's offset from UTC lies within these bounds (Kiribati +14, Baker Island -12), a margin included. */
const MAX_AHEAD_MS = 15 * HOUR_MS;
const MAX_BEHIND_MS = 13 * HOUR_MS;

/**
 * Epoch ms of the first instant of a local date in a zone: its midnight, or where the
 * clocks skip midnight, the instant they skip from; NaN for a text that is no date. A day
 * is dayStart(next date) - dayStart(date) long: 23 or 25 hours when the clocks change.
 */
export function dayStart(date: string, timeZone: string): number {
  const key = `${timeZone} ${date}`;
  let t = dayStarts.get(key);
  if (t === undefined) {
    t = firstInstant(date, timeZone);
    if (dayStarts.size >= DAY_STARTS_MAX) dayStarts.clear();
    dayStarts.set(key, t);
  }
  return t;
}

/** dayStart's answers: a day's rollup asks for its own on each reading, and the answer depends on its arguments alone. */
const dayStarts = new Map<string, number>();
const DAY_STARTS_MAX = 20_000;

/**
 * The first instant whose local date is `date`, by bisection on whole seconds (clocks
 * change on a whole second): midnight UTC less the widest offset ahead is still the day
 * before everywhere, plus the widest behind already the day itself.
 */
function firstInstant(date: string, timeZone: string): number {
  const wall = DATE_RE.test(date) && isCalendarDay(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)))
    ? Date.parse(`${date}T00:00:00Z`) : NaN;
  if (Number.isNaN(wall)) return NaN;
  let before = (wall - MAX_AHEAD_MS) / 1000;
  let from = (wall + MAX_BEHIND_MS) / 1000;
  while (from - before > 1) {
    const mid = Math.floor((before + from) / 2);
    if (localDate(new Date(mid * 1000).toISOString(), timeZone) < date) before = mid;
    else from = mid;
  }
  return from * 1000;
}

const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/;
const CANONICAL_UTC_MS = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** Parses an ISO 8601 datetime that names its offset; returns canonical UTC or null. */
export function canonicalTimestamp(v: unknown): string | null {
  if (typeof v !== "string") return null;
  // Most clients already send canonical UTC: checking it round-trips is enough.
  const c = CANONICAL_UTC_MS.exec(v);
  if (c) return isCalendarDay(Number(c[1]), Number(c[2]), Number(c[3])) ? v : null;
  const m = ISO_DATETIME.exec(v);
  if (!m || !isCalendarDay(Number(m[1]), Number(m[2]), Number(m[3]))) return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * A payload instant (collection_datetime, sensor_timestamp, ...) as the service writes
 * its own, the log's timestamp: UTC with milliseconds. Anything canonicalTimestamp does
 * not take (no offset, a day that does not exist) stays as sent: reading a time without
 * an offset in the process's time zone would make the fold depend on the machine.
 */
export function utcInstant(s: string): string {
  let u = instants.get(s);
  if (u === undefined) {
    u = canonicalTimestamp(s) ?? s;
    if (instants.size >= INSTANTS_MAX) instants.clear();
    instants.set(s, u);
  }
  return u;
}

/**
 * utcInstant's answers: reducers read the same payload instants again on every later log
 * (a device's latest reading, a period's start), and parsing one was a tenth of the fold.
 * The answer depends on the text alone, so the cache cannot change a result.
 */
const instants = new Map<string, string>();
const INSTANTS_MAX = 20_000;
