import { describe, expect, it } from "vitest";
import { glucoseProfile, localClock, percentile, timeInRange } from "../../../console/src/charts/glucose-stats.js";

/** The console's ambulatory glucose profile numbers (console/src/charts/glucose-stats.ts). */
describe("the console's glucose profile", () => {
  it("puts each value in the consensus's five ranges, the thresholds' own values on the range side", () => {
    // <54 | 54-69 | 70-180 | 181-250 | >250: 54, 70, 180 and 250 belong to the range above or in.
    const tir = timeInRange([53.9, 54, 69.9, 70, 180, 180.5, 250, 250.1, 120, 120]);
    expect(tir).toEqual({ very_low: 10, low: 20, in_range: 40, high: 20, very_high: 10 });
  });

  it("interpolates percentiles between closest ranks", () => {
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(percentile([10], 0.95)).toBe(10);
    expect(percentile([0, 100], 0.25)).toBe(25);
  });

  it("reads the local date and minute across a daylight saving change", () => {
    const ny = localClock("America/New_York");
    // 2026-11-01 06:30 UTC is 01:30 EST (after the change back at 06:00 UTC); 05:30 UTC is 01:30 EDT.
    expect(ny(Date.parse("2026-11-01T06:30:00Z"))).toEqual({ date: "2026-11-01", minute: 90 });
    expect(ny(Date.parse("2026-11-01T05:30:00Z"))).toEqual({ date: "2026-11-01", minute: 90 });
    expect(ny(Date.parse("2026-11-01T03:59:00Z"))).toEqual({ date: "2026-10-31", minute: 23 * 60 + 59 });
    expect(localClock("Asia/Kolkata")(Date.parse("2026-01-01T00:00:00Z"))).toEqual({ date: "2026-01-01", minute: 330 });
    // Adelaide leaves summer time at 03:00 local (16:30 UTC), inside a UTC hour.
    const adl = localClock("Australia/Adelaide");
    expect(adl(Date.parse("2026-04-04T16:15:00Z"))).toEqual({ date: "2026-04-05", minute: 2 * 60 + 45 });
    expect(adl(Date.parse("2026-04-04T16:45:00Z"))).toEqual({ date: "2026-04-05", minute: 2 * 60 + 15 });
  });

  it("bins readings by local time of day, with a trace per local date", () => {
    const day = Date.parse("2026-03-02T00:00:00Z");
    const readings = [0, 1].flatMap((d) => [{ at: day + d * 86_400_000 + 8 * 3_600_000, mg_dl: 100 + d * 20 }]);
    const p = glucoseProfile(readings, "UTC")!;
    expect(p.days).toEqual(["2026-03-02", "2026-03-03"]);
    expect(p.p50[32]).toBe(110);
    expect(p.daily[1]![32]).toBe(120);
    expect(p.daily[0]![0]).toBeNull();
    expect(p.mean_mg_dl).toBe(110);
    expect(glucoseProfile([], "UTC")).toBeNull();
  });
});
