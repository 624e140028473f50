/**
 * Time helpers. Everything here is a function of its arguments: dates in a timezone come
 * from Intl with an explicit zone, never from the machine's clock or zone.
 */

/** Epoch ms of an ISO timestamp; NaN when unparsable. */
export function timeMs(iso: string): number {
  return Date.parse(iso);
}

/**
 * Orders two ISO timestamps by instant. Strings are not compared directly because
 * "…00Z" and "…00.000Z" are the same instant. Unparsable values sort after parsable ones
 * and among themselves by text, so the order stays total.
 */
const MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function cmpTime(a: string, b: string): number {
  // Fast path: two canonical "YYYY-MM-DDTHH:mm:ss.sssZ" stamps (what the service stores)
  // order as text; this comparison runs for nearly every fold step.
  if (a.length === 24 && b.length === 24 && MS_UTC.test(a) && MS_UTC.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const x = timeMs(a);
  const y = timeMs(b);
  const xn = Number.isNaN(x);
  const yn = Number.isNaN(y);
  if (xn || yn) return xn && yn ? (a < b ? -1 : a > b ? 1 : 0) : xn ? 1 : -1;
  return x - y;
}

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
