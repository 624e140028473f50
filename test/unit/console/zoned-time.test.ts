import { describe, expect, it } from "vitest";
import { endOfDay, startOfDay, wallClock, zonedToUtc } from "../../../console/src/lib/zoned-time.js";

describe("zoned time (the console's as_of and since pickers)", () => {
  it("reads a wall-clock time in the patient's zone as the UTC instant", () => {
    expect(zonedToUtc("2026-03-01T18:00", "Europe/Paris")).toBe("2026-03-01T17:00:00.000Z");
    expect(zonedToUtc("2026-07-01T18:00", "Europe/Paris")).toBe("2026-07-01T16:00:00.000Z");
    expect(zonedToUtc("2026-07-01T18:00", "America/New_York")).toBe("2026-07-01T22:00:00.000Z");
    expect(zonedToUtc("2026-07-01T09:30", "Asia/Kolkata")).toBe("2026-07-01T04:00:00.000Z");
    expect(zonedToUtc("2026-07-01T09:30", "UTC")).toBe("2026-07-01T09:30:00.000Z");
  });

  it("gives a day's first and last millisecond in the zone", () => {
    expect(startOfDay("2026-11-01", "America/Los_Angeles")).toBe("2026-11-01T07:00:00.000Z");
    // 1 November 2026 is 25 hours long there: the clocks go back at 02:00.
    expect(endOfDay("2026-11-01", "America/Los_Angeles")).toBe("2026-11-02T07:59:59.999Z");
    expect(endOfDay("2026-12-31", "Pacific/Auckland")).toBe("2026-12-31T10:59:59.999Z");
  });

  it("reads a time skipped by spring forward as the instant after the gap, and a repeated one as its first occurrence", () => {
    // Paris skips 02:00-03:00 on 29 March 2026.
    expect(zonedToUtc("2026-03-29T02:30", "Europe/Paris")).toBe("2026-03-29T01:30:00.000Z");
    expect(wallClock("2026-03-29T01:30:00.000Z", "Europe/Paris")).toBe("2026-03-29 03:30");
    // 02:30 happens twice on 25 October 2026; the first is in summer time (UTC+2).
    expect(zonedToUtc("2026-10-25T02:30", "Europe/Paris")).toBe("2026-10-25T00:30:00.000Z");
  });

  it("answers undefined for text that is not a wall-clock time", () => {
    expect(zonedToUtc("", "UTC")).toBeUndefined();
    expect(zonedToUtc("2026-03-01", "UTC")).toBeUndefined();
    expect(zonedToUtc("yesterday 18:00", "UTC")).toBeUndefined();
  });
});
