/**
 * Wall-clock times in a patient's time zone as instants: a clinician picks "as of 3 March,
 * 18:00" in the patient's day, and the API takes UTC. Intl knows the zones' rules; the
 * browser's own zone plays no part.
 */

/** A formatter giving an instant's wall-clock parts in `timeZone`. */
export const zoneFormatter = (timeZone: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" });

/** How far the zone's wall clock is ahead of UTC at the instant `ms` (negative west of Greenwich). */
export function offsetAt(f: Intl.DateTimeFormat, ms: number): number {
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, x.value]));
  const wall = Date.UTC(+p.year!, +p.month! - 1, +p.day!, +p.hour!, +p.minute!, +p.second!);
  return wall - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant whose wall-clock time in `timeZone` is `local` ("YYYY-MM-DDTHH:MM[:SS[.mmm]]").
 * A wall time skipped by a spring-forward change moves forward by the gap (02:30 in a gap from 02:00 to 03:00 reads as 03:30); one
 * repeated by a fall-back change, as its first occurrence. Undefined when `local` is not a time.
 */
export function zonedToUtc(local: string, timeZone: string): string | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,3}))?)?$/.exec(local);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s = "0", frac = "0"] = m;
  const wall = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s, +frac.padEnd(3, "0"));
  if (Number.isNaN(wall)) return undefined;
  const f = zoneFormatter(timeZone);
  // The offset a day either side tells the two candidates apart around a change.
  const candidates = [...new Set([offsetAt(f, wall - 86_400_000), offsetAt(f, wall + 86_400_000)])].map((o) => wall - o).sort((a, b) => a - b);
  const exact = candidates.find((t) => t + offsetAt(f, t) === wall);
  // No candidate shows this wall time: it fell in a gap. Read with the offset before the
  // change, it lands as far past the gap's end as it was past its start (Temporal's "compatible").
  return new Date(exact ?? wall - offsetAt(f, wall - 86_400_000)).toISOString();
}

/** The last millisecond of `day` ("YYYY-MM-DD") in `timeZone`, as an ISO instant. */
export const endOfDay = (day: string, timeZone: string) => zonedToUtc(`${day}T23:59:59.999`, timeZone);

/** The first millisecond of `day` in `timeZone`. */
export const startOfDay = (day: string, timeZone: string) => zonedToUtc(`${day}T00:00:00.000`, timeZone);

/** An instant as the zone's wall clock, "YYYY-MM-DD HH:MM". */
export function wallClock(iso: string, timeZone: string): string {
  const p = Object.fromEntries(zoneFormatter(timeZone).formatToParts(Date.parse(iso)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}`;
}
