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
export function cmpTime(a: string, b: string): number {
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
export function localDate(iso: string, timeZone: string): string {
  const ms = timeMs(iso);
  if (Number.isNaN(ms)) return iso.slice(0, 10);
  const parts = formatter(timeZone).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** The day a reading belongs to: the client's local_date when valid, else the instant's date in tz. */
export function dayOf(localDateField: string | undefined, instant: string, timeZone: string): string {
  return localDateField !== undefined && DATE_RE.test(localDateField) ? localDateField : localDate(instant, timeZone);
}
