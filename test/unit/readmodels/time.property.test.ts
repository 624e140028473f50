import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { addDays, cmpTime, dayStart, localDate, utcInstant } from "../../../readmodels/lib/time.js";

/** The order cmpTime must give: Date.parse's instant, unparsable after parsable, then text. */
function reference(a: string, b: string): number {
  const x = Date.parse(a);
  const y = Date.parse(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y) ? (a < b ? -1 : a > b ? 1 : 0) : Number.isNaN(x) ? 1 : -1;
  return Math.sign(x - y);
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
// Near-valid stamps, edges included: day 28-31, hour 23-24, second 59-60, 0-9 fraction digits, other forms.
const stamp = fc
  .record({
    year: fc.integer({ min: 2024, max: 2026 }),
    month: fc.integer({ min: 1, max: 13 }),
    day: fc.integer({ min: 27, max: 31 }),
    hour: fc.constantFrom(0, 12, 23, 24),
    minute: fc.constantFrom(0, 59),
    second: fc.constantFrom(0, 59, 60),
    fraction: fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
    zone: fc.constantFrom("Z", "Z", "Z", "+01:00", ""),
  })
  .map((t) => `${t.year}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}${t.fraction === undefined ? "" : `.${t.fraction}`}${t.zone}`);
const anyStamp = fc.oneof(stamp, stamp.map((s) => s.replace(/-(2[7-9]|3[01])T/, "-05T")), fc.constantFrom("not a time", "2026-01-01T00:00:00.000Z"));

describe("cmpTime", () => {
  it("orders any two timestamps as their instants (Date.parse), whichever path it takes", () => {
    fc.assert(fc.property(anyStamp, anyStamp, (a, b) => Math.sign(cmpTime(a, b)) === reference(a, b)), { numRuns: 20_000 });
  });

  it("reads a fraction to the millisecond, as Date.parse does", () => {
    expect(cmpTime("2026-01-05T00:00:00Z", "2026-01-05T00:00:00.000Z")).toBe(0);
    expect(cmpTime("2026-01-05T00:00:00.1Z", "2026-01-05T00:00:00.099999Z")).toBe(1);
    expect(cmpTime("2026-01-05T00:00:00.0004Z", "2026-01-05T00:00:00Z")).toBe(0);
  });
});

/** What localDate must give: the date Intl shows on the zone's wall clock at that instant. */
const formats = new Map<string, Intl.DateTimeFormat>();
function intlDate(ms: number, timeZone: string): string {
  // One formatter per zone: making one costs about a millisecond, 30,000 runs would take half a minute.
  let f = formats.get(timeZone);
  if (!f) formats.set(timeZone, (f = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })));
  const parts = f.formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  return `${get("year")}-${get("month")}-${get("day")}`;
}

// Whole-hour, half-hour and 45-minute offsets, 30-minute DST (Lord Howe), DST at midnight
// (Havana, Santiago), zones that skipped a day (Apia) or changed offset many times.
const ZONES = ["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Chatham", "America/St_Johns", "America/Havana", "America/Santiago", "Pacific/Apia", "Africa/Casablanca", "Europe/Dublin", "Asia/Tehran", "Nowhere/Unknown"];

describe("localDate", () => {
  it("gives the zone's wall-clock date of any instant, across offset changes", () => {
    const instant = fc.oneof(
      fc.integer({ min: Date.UTC(1890, 0, 1), max: Date.UTC(2100, 0, 1) }),
      // Near the transitions of recent years, to the second.
      fc.integer({ min: Date.UTC(2020, 0, 1) / 1000, max: Date.UTC(2027, 0, 1) / 1000 }).map((s) => s * 1000),
    );
    fc.assert(
      fc.property(instant, fc.constantFrom(...ZONES), (ms, zone) => localDate(new Date(ms).toISOString(), zone) === intlDate(ms, zone === "Nowhere/Unknown" ? "UTC" : zone)),
      { numRuns: 30_000 },
    );
  });

  it("gives every minute of a DST change's hours their own date in a zone that changes at midnight", () => {
    // Havana's and Santiago's clocks change at midnight: the date flips inside the hour.
    for (const zone of ["America/Havana", "America/Santiago"]) {
      for (let ms = Date.UTC(2024, 2, 9, 0); ms < Date.UTC(2024, 2, 11, 0); ms += 60_000) {
        expect(localDate(new Date(ms).toISOString(), zone)).toBe(intlDate(ms, zone));
      }
      for (let ms = Date.UTC(2024, 8, 6, 0); ms < Date.UTC(2024, 8, 9, 0); ms += 60_000) {
        expect(localDate(new Date(ms).toISOString(), zone)).toBe(intlDate(ms, zone));
      }
    }
  });
});

describe("dayStart", () => {
  it("is the first instant of the local date: its date is that date, a second earlier the day before", () => {
    const date = fc.integer({ min: Date.UTC(1990, 0, 1) / 86_400_000, max: Date.UTC(2030, 0, 1) / 86_400_000 }).map((d) => new Date(d * 86_400_000).toISOString().slice(0, 10));
    fc.assert(
      fc.property(date, fc.constantFrom(...ZONES), (d, zone) => {
        const t = dayStart(d, zone);
        const tz = zone === "Nowhere/Unknown" ? "UTC" : zone;
        // A date the zone skipped (Apia's 2011-12-30) starts where the next one does.
        const expected = t === dayStart(addDays(d, 1), zone) ? addDays(d, 1) : d;
        return intlDate(t, tz) === expected && intlDate(t - 1000, tz) < d;
      }),
      { numRuns: 3_000 },
    );
  });

  it("makes a day of 25 hours when clocks go back and of 23 when they go forward, from the instant clocks skip midnight", () => {
    const hours = (d: string, zone: string) => (dayStart(addDays(d, 1), zone) - dayStart(d, zone)) / 3_600_000;
    expect(dayStart("2026-11-01", "America/New_York")).toBe(Date.parse("2026-11-01T04:00:00Z"));
    expect(hours("2026-11-01", "America/New_York")).toBe(25);
    expect(hours("2026-03-08", "America/New_York")).toBe(23);
    expect(hours("2026-03-08", "UTC")).toBe(24);
    // Havana goes from 00:00 to 01:00 on 2024-03-10: the day starts at 01:00 CDT.
    expect(dayStart("2024-03-10", "America/Havana")).toBe(Date.parse("2024-03-10T05:00:00Z"));
    expect(hours("2026-10-04", "Australia/Lord_Howe")).toBe(23.5);
    expect(dayStart("2011-12-30", "Pacific/Apia")).toBe(dayStart("2011-12-31", "Pacific/Apia"));
    expect(dayStart("2026-02-30", "UTC")).toBeNaN();
  });
});

describe("utcInstant", () => {
  it("writes an instant with an offset as UTC with milliseconds, keeping its place in time order", () => {
    const instant = fc.record({ ms: fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2100, 0, 1) }), offset: fc.integer({ min: -14 * 60, max: 14 * 60 }) })
      .map(({ ms, offset }) => {
        const local = new Date(ms + offset * 60_000).toISOString().slice(0, 19);
        const sign = offset < 0 ? "-" : "+";
        return { ms, text: `${local}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}` };
      });
    fc.assert(
      fc.property(instant, instant, (a, b) => {
        expect(utcInstant(a.text)).toBe(new Date(Math.floor(a.ms / 1000) * 1000).toISOString());
        expect(Math.sign(cmpTime(utcInstant(a.text), utcInstant(b.text)))).toBe(Math.sign(cmpTime(a.text, b.text)));
      }),
      { numRuns: 5_000 },
    );
  });

  it("leaves canonical stamps, text without an offset, and text that is no time as they are", () => {
    for (const s of ["2026-03-03T04:00:00.000Z", "2026-03-03T09:00:00", "2026-03-03", "not a time"]) expect(utcInstant(s)).toBe(s);
    expect(utcInstant("2026-03-03T09:00:00+05:00")).toBe("2026-03-03T04:00:00.000Z");
    // Date.parse would roll a day that does not exist into the next month.
    expect(utcInstant("2026-02-30T10:00Z")).toBe("2026-02-30T10:00Z");
  });
});
