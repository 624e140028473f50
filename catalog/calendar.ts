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

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `year`-`month`-`day` (month 1-12) names a real day of the calendar, leap years
 * included. Arithmetic only, no Date: the fold asks this for every stamp past the 28th.
 */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  if (!Number.isInteger(month) || !Number.isInteger(day) || month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0);
}

/** Epoch ms of the calendar day `year`-`month`-`day` (month 1-12) at UTC midnight, or undefined when there is no such day (2025-02-30). */
export function calendarDayMs(year: number, month: number, day: number): number | undefined {
  return isCalendarDay(year, month, day) ? utcMs(year, month - 1, day) : undefined;
}
