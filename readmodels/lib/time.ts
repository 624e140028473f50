/**
 * Time helpers. Everything here is a function of its arguments: dates in a timezone come
 * from Intl with an explicit zone, never from the machine's clock or zone.
 */

/** Epoch ms of an ISO timestamp; NaN when unparsable. */
export function timeMs(iso: string): number {
  return Date.parse(iso);
}

/** "YYYY-MM-DDTHH:mm:ss[.f…]Z": the form of nearly every stamp the fold compares. */
const Z_FORM = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The stamp's milliseconds digits when its text orders like its instant, else null. Only
 * fields in range qualify: Date.parse reads "02-30" as March 2 and "T24:00" as the next
 * day, and refuses a 13th month or a 60th second; those take the slow path. Date.parse
 * keeps the first three digits of a fraction, and so does this.
 */
function orderedUtc(s: string): string | null {
  const m = Z_FORM.exec(s);
  if (m === null) return null;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  const leap = month === 2 && (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) ? 1 : 0;
  if (month < 1 || month > 12 || day < 1 || day > DAYS[month - 1]! + leap || +m[4]! > 23 || +m[5]! > 59 || +m[6]! > 59) return null;
  return m[7] === undefined ? "000" : (m[7] + "00").slice(0, 3);
}

/**
 * Orders two ISO timestamps by instant. Strings are not compared directly because
 * "…00Z" and "…00.000Z" are the same instant. Unparsable values sort after parsable ones
 * and among themselves by text, so the order stays total. Two UTC stamps in range are
 * compared as text, without Date.parse: this runs for nearly every fold step.
 */
export function cmpTime(a: string, b: string): number {
  const fa = orderedUtc(a);
  const fb = fa === null ? null : orderedUtc(b);
  if (fa !== null && fb !== null) {
    // Same form up to the seconds, so the text of those 19 characters orders the instant.
    const c = cmpText(a.slice(0, 19), b.slice(0, 19));
    return c !== 0 ? c : cmpText(fa, fb);
  }
  const x = timeMs(a);
  const y = timeMs(b);
  const xn = Number.isNaN(x);
  const yn = Number.isNaN(y);
  if (xn || yn) return xn && yn ? cmpText(a, b) : xn ? 1 : -1;
  return x - y;
}

const cmpText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function maxTime(a: string, b: string): string {
  return cmpTime(b, a) > 0 ? b : a;
}

export function minTime(a: string, b: string): string {
  return cmpTime(b, a) < 0 ? b : a;
}

/** Anything placed in a bounded list: sorted by (timestamp, log_id), the fold's own order. */
export interface Stamped {
  timestamp: string;
  log_id: string;
}

export function cmpStamped(a: Stamped, b: Stamped): number {
  return cmpTime(a.timestamp, b.timestamp) || (a.log_id < b.log_id ? -1 : a.log_id > b.log_id ? 1 : 0);
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

/** The calendar date (YYYY-MM-DD) of an instant in an IANA timezone. */
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** Zone offsets change at minute boundaries at the finest, so a (zone, minute) answer can be kept. */
const localDates = new Map<string, string>();

export function localDate(iso: string, timeZone: string): string {
  // Stored timestamps are canonical UTC: in UTC the date is the first ten characters.
  if (timeZone === "UTC" && CANONICAL_UTC.test(iso)) return iso.slice(0, 10);
  const key = `${timeZone}|${iso.slice(0, 16)}`;
  const hit = localDates.get(key);
  if (hit !== undefined && CANONICAL_UTC.test(iso)) return hit;
  const ms = timeMs(iso);
  if (Number.isNaN(ms)) return iso.slice(0, 10);
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  const day = `${get("year")}-${get("month")}-${get("day")}`;
  if (CANONICAL_UTC.test(iso)) {
    if (localDates.size >= 50_000) localDates.clear();
    localDates.set(key, day);
  }
  return day;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** The day a reading belongs to: the client's local_date when valid, else the instant's date in tz. */
export function dayOf(localDateField: string | undefined, instant: string, timeZone: string): string {
  return localDateField !== undefined && DATE_RE.test(localDateField) ? localDateField : localDate(instant, timeZone);
}
