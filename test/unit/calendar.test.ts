import { describe, expect, it } from "vitest";
import { calendarDayMs, utcMs } from "../../catalog/calendar.js";
import { isoMs } from "../../query/filter.js";
import { isCalendarDate } from "../../src/control/patient-records.js";

describe("calendar days", () => {
  it("reads years 0-99 as themselves, not as 1900-1999", () => {
    expect(new Date(calendarDayMs(1, 1, 1)!).toISOString()).toBe("0001-01-01T00:00:00.000Z");
    expect(new Date(calendarDayMs(50, 6, 15)!).toISOString()).toBe("0050-06-15T00:00:00.000Z");
    expect(calendarDayMs(1950, 6, 15)).toBe(Date.UTC(1950, 5, 15));
    // Leap years of the proleptic Gregorian calendar: 4 is one, 100 is not, 0 is.
    expect(calendarDayMs(4, 2, 29)).toBeDefined();
    expect(calendarDayMs(100, 2, 29)).toBeUndefined();
    expect(calendarDayMs(0, 2, 29)).toBeDefined();
    expect(calendarDayMs(2025, 2, 30)).toBeUndefined();
    expect(calendarDayMs(2025, 13, 1)).toBeUndefined();
    expect(calendarDayMs(2025, 0, 1)).toBeUndefined();
    expect(utcMs(99, 11, 32)).toBe(Date.parse("0100-01-01T00:00:00Z"));
  });

  it("serve the routes' date checks alike", () => {
    expect(isCalendarDate("0001-01-01")).toBe(true);
    expect(isCalendarDate("0100-02-29")).toBe(false);
    expect(isoMs("0050-06-15")).toBe(Date.parse("0050-06-15T00:00:00Z"));
    expect(isoMs("0100-02-29")).toBeUndefined();
  });
});
