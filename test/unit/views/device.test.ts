import { describe, expect, it } from "vitest";
import { renderView } from "../../../readmodels/views/index.js";
import { given, log } from "../readmodels/given.js";
import { blockOf, deviceLogs, shape } from "./fixtures.js";

describe("device_snapshot", () => {
  const f = deviceLogs();
  const v = renderView("device_snapshot", given(f.logs));

  it("renders daily rollups for the week, latest readings and out-of-range values", () => {
    expect(shape(v)).toEqual([
      ["heart_week", "week"], ["sleep_week", "week"], ["activity_week", "week"], ["glucose_week", "week"], ["glucose_14_days", "long_term"],
      ["latest_readings", "long_term"], ["out_of_range", "temp"],
    ]);
  });

  it("rolls heart rate, HRV and SpO2 up per day of the week, without older days", () => {
    const b = blockOf(v, "heart_week");
    expect(b.text.split("\n")).toEqual([
      "- 2025-03-15: resting 60 bpm, avg 72 bpm, range 50–130 bpm, HRV 45 ms",
      "- 2025-03-17: SpO2 88%",
      "- 2025-03-18: SpO2 95%",
    ]);
    expect(b.refs).toEqual([f.hr.id, f.spo2Low.id, f.spo2.id].sort());
  });

  it("gives sleep, activity and glucose per day", () => {
    expect(blockOf(v, "sleep_week")).toMatchObject({ text: "- 2025-03-16: 7 h 00 min (deep 80 min)", refs: [f.sleep.id] });
    expect(blockOf(v, "activity_week").text).toBe("- 2025-03-16: 6,500 steps, 40 active min\n- 2025-03-19: 4,000 steps\n- **Average**: 5,250 steps/day over 2 days");
    const g = blockOf(v, "glucose_week");
    const lines = g.text.split("\n");
    // The week's consensus metrics first, with the thresholds they use, then each day.
    expect(lines[0]).toMatch(/^- \*\*2025-03-14 to 2025-03-20\*\*: 33.3% in range, 33.3% below 70 \(0% below 54\), 33.3% above 180 \(33.3% above 250\); mean 152 mg\/dL, GMI 6.9%, CV 70(\.0)?%; readings cover 0.4% of the 7 days$/);
    expect(lines[1]).toBe("- **Thresholds**: in range 70–180 mg/dL, below 70 and 54, above 180 and 250 (international consensus; from the readings' values, not devices' flags)");
    expect(lines[2]).toBe("- 2025-03-18: mean 168 mg/dL, range 65–270, 0% in range (2 readings)");
    expect((g.data as { metrics: { readings: number } }).metrics.readings).toBe(3);
    expect(g.refs).toEqual([f.cgmLow.id, f.cgmHigh.id, f.cgm.id].sort());
  });

  it("keeps the latest reading of each kind as long-term", () => {
    expect(blockOf(v, "latest_readings").refs).toEqual([f.hr.id, f.spo2.id, f.sleep.id, f.steps2.id, f.cgm.id].sort());
    expect(blockOf(v, "latest_readings").text).toContain("- **Glucose**: 120 mg/dL (normal, flat) on 2025-03-20");
  });

  it("flags glucose below 70 or above 250 mg/dL and SpO2 below 90% in the week, not before it", () => {
    const b = blockOf(v, "out_of_range");
    expect(b.text).toBe("- 2025-03-18: glucose as low as 65 mg/dL and as high as 270 mg/dL\n- 2025-03-17: SpO2 as low as 88%");
    expect(b.refs).toEqual([f.spo2Low.id, f.cgmLow.id, f.cgmHigh.id].sort());
    expect(b.refs).not.toContain(f.cgmOld.id);
  });

  it("shows a re-sent night once and the glucose reading taken last", () => {
    const night = { start_datetime: "2025-03-01T23:00:00Z", end_datetime: "2025-03-02T07:00:00Z" };
    const view = renderView("device_snapshot", given([
      log("sleep_data", "2025-03-02T07:05:00Z", { total_sleep_minutes: 400, period: night }),
      log("sleep_data", "2025-03-02T09:00:00Z", { total_sleep_minutes: 410, period: night }),
      log("cgm_reading", "2025-03-02T15:00:00Z", { glucose_mg_dl: 250, sensor_timestamp: "2025-03-02T15:00:00Z" }),
      log("cgm_reading", "2025-03-02T16:00:00Z", { glucose_mg_dl: 100, sensor_timestamp: "2025-03-02T10:00:00Z" }),
    ]));
    expect(blockOf(view, "sleep_week").text).toBe("- 2025-03-02: 6 h 50 min");
    expect(blockOf(view, "latest_readings").text).toBe("- **Sleep**: 6 h 50 min on 2025-03-02\n- **Glucose**: 250 mg/dL (high) on 2025-03-02");
  });

  it("shows a short distance in km without rounding it to 0", () => {
    const view = renderView("device_snapshot", given([
      log("activity_data", "2025-03-02T12:00:00Z", { steps: 60, local_date: "2025-03-02", distance_travelled: { value: 40, unit: "m" } }),
    ]));
    expect(blockOf(view, "activity_week").text).toBe("- 2025-03-02: 60 steps, 0.04 km");
  });
});
