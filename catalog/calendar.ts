/**
 * Days of the proleptic Gregorian calendar as UTC instants, for any year 0-9999. Date.UTC
 * and `new Date(y, ...)` read years 0-99 as 1900-1999, so 0050-03-01 would be 1950's day:
 * these set the full year instead.
 */

/** Epoch ms of `year`-`monthIndex + 1`-`day` at UTC midnight; a day or month past the end rolls over, as Date.UTC's do. */
export function utcMs(year: number, monthIndex: number, day: number): number {
  const at = new Date(0);
  return at.setUTCFullYear(year, monthIndex, day);
}

/** Epoch ms of the calendar day `year`-`month`-`day` (month 1-12) at UTC midnight, or undefined when there is no such day (2025-02-30). */
export function calendarDayMs(year: number, month: number, day: number): number | undefined {
  const ms = utcMs(year, month - 1, day);
  const at = new Date(ms);
  return at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day ? ms : undefined;
}
