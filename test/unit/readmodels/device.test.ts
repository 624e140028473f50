import { cgmMetrics } from "../../../readmodels/modules/glucose/index.js";
import { describe, expect, it } from "vitest";
import { applyInArrivalOrder, given, log, payload } from "./given.js";

describe("physical_activity", () => {
  it("rolls activity up by local_date when given, else by the date in the patient's timezone", () => {
    const logs = [
      // 02:00 UTC on the 2nd is still the 1st in New York.
      log("activity_data", "2025-03-02T02:00:00Z", { steps: 1000, distance_travelled: { value: 1.5, unit: "km" }, period: { start_datetime: "2025-03-02T02:00:00Z" } }),
      log("activity_data", "2025-03-02T03:00:00Z", { steps: 500, local_date: "2025-03-02", distance_travelled: { value: 1000, unit: "feet" } }),
      log("activity_data", "2025-03-01T15:00:00Z", { steps: 2000, active_minutes: 30, exercise_sessions: [{}, {}] }),
    ];
    const d = payload(given(logs, "America/New_York"), "physical_activity");
    expect(d.days.map((x) => [x.date, x.entries, x.steps, x.distance_m, x.active_minutes, x.exercise_sessions])).toEqual([
      ["2025-03-01", 2, 3000, 1500, 30, 2],
      ["2025-03-02", 1, 500, 304.8, null, null],
    ]);
    expect(payload(given(logs, "UTC"), "physical_activity").days.map((x) => [x.date, x.steps])).toEqual([["2025-03-01", 2000], ["2025-03-02", 1500]]);
    expect(d.recent.map((r) => r.steps)).toEqual([2000, 1000, 500]);
  });

  it("keeps only the latest 90 days", () => {
    const logs = Array.from({ length: 100 }, (_, i) => log("activity_data", new Date(Date.UTC(2025, 0, 1 + i, 12)).toISOString(), { steps: i }));
    const days = payload(given(logs), "physical_activity").days;
    expect(days).toHaveLength(90);
    expect(days[0]?.date).toBe("2025-01-11");
  });
});

describe("heart", () => {
  it("rolls heart-rate summaries and SpO2 readings up per day with the latest of each kind", () => {
    const s = given([
      log("heart_rate_data", "2025-03-01T08:00:00Z", { avg_bpm: 70, resting_bpm: 60, min_bpm: 50, max_bpm: 120, irregular_events_count: 1, period: { start_datetime: "2025-03-01T00:00:00Z" } }),
      log("heart_rate_data", "2025-03-01T20:00:00Z", { avg_bpm: 80, min_bpm: 55, max_bpm: 140, irregular_events_count: 2 }),
      log("spo2_reading", "2025-03-01T22:00:00Z", { spo2_percent: 95, sensor_timestamp: "2025-03-01T22:00:00Z", device_provider: "garmin" }),
      log("spo2_reading", "2025-03-01T23:00:00Z", { spo2_percent: 91, sensor_timestamp: "2025-03-01T23:00:00Z", device_provider: "garmin" }),
    ]);
    const d = payload(s, "heart");
    expect(d.days).toHaveLength(1);
    expect(d.days[0]).toMatchObject({
      date: "2025-03-01", heart_rate_entries: 2, avg_bpm: { count: 2, mean: 75 }, min_bpm: 50, max_bpm: 140, irregular_events_count: 3,
      spo2_percent: { count: 2, mean: 93, min: 91, max: 95 },
    });
    expect(d.latest.spo2?.values).toMatchObject({ spo2_percent: 91 });
    expect(d.latest.heart_rate?.values).toMatchObject({ avg_bpm: 80 });
  });
});

describe("sleep", () => {
  it("attributes a night's sleep to the day the patient woke up, in their timezone", () => {
    const s = given([
      log("sleep_data", "2025-03-02T07:00:00Z", { total_sleep_minutes: 420, deep_sleep_minutes: 90, period: { start_datetime: "2025-03-01T23:00:00Z", end_datetime: "2025-03-02T07:00:00Z" } }),
      log("sleep_data", "2025-03-02T15:00:00Z", { total_sleep_minutes: 30, period: { start_datetime: "2025-03-02T14:30:00Z", end_datetime: "2025-03-02T15:00:00Z" } }),
    ], "Asia/Tokyo");
    const d = payload(s, "sleep");
    expect(d.days.map((x) => [x.date, x.sessions, x.total_sleep_minutes, x.deep_sleep_minutes])).toEqual([["2025-03-02", 1, 420, 90], ["2025-03-03", 1, 30, null]]);
    expect(d.latest?.total_sleep_minutes).toBe(30);
  });
});

describe("glucose", () => {
  it("counts time in range per day from the readings' values (consensus thresholds), never from a device's flag", () => {
    const s = given([
      log("cgm_reading", "2025-03-01T08:00:00Z", { glucose_mg_dl: 65, sensor_timestamp: "2025-03-01T08:00:00Z" }),
      log("cgm_reading", "2025-03-01T08:05:00Z", { glucose_mg_dl: 120, sensor_timestamp: "2025-03-01T08:05:00Z", trend_arrow: "rising" }),
      log("cgm_reading", "2025-03-01T08:10:00Z", { glucose_mg_dl: 150, glucose_flag: "high", sensor_timestamp: "2025-03-01T08:10:00Z" }),
      log("cgm_reading", "2025-03-01T08:15:00Z", { glucose_mg_dl: 100, sensor_timestamp: "2025-03-01T08:15:00Z" }),
      // A device that calls 245 and 58 normal: both still count out of range.
      log("cgm_reading", "2025-03-01T08:20:00Z", { glucose_mg_dl: 245, glucose_flag: "normal", sensor_timestamp: "2025-03-01T08:20:00Z" }),
      log("cgm_reading", "2025-03-01T08:25:00Z", { glucose_mg_dl: 52, glucose_flag: "normal", sensor_timestamp: "2025-03-01T08:25:00Z" }),
      log("cgm_reading", "2025-03-01T08:30:00Z", { glucose_mg_dl: 260, sensor_timestamp: "2025-03-01T08:30:00Z" }),
    ]);
    const d = payload(s, "glucose");
    expect(d.days[0]).toMatchObject({ readings: 7, low: 2, very_low: 1, in_range: 3, high: 2, very_high: 1, time_in_range_percent: 42.9, covered_slots: 3 });
    expect(d.latest).toMatchObject({ glucose_mg_dl: 260, glucose_flag: "high", device_flag: null });
    expect(d.recent.find((r) => r.glucose_mg_dl === 52)).toMatchObject({ glucose_flag: "low", device_flag: "normal" });

    const m = cgmMetrics(d.days, { firstDay: "2025-03-01", lastDay: "2025-03-01", tz: "UTC" })!;
    expect(m).toMatchObject({ readings: 7, time_in_range_percent: 42.9, below_70_percent: 28.6, below_54_percent: 14.3, above_180_percent: 28.6, above_250_percent: 14.3 });
    // Mean 141.7 mg/dL: GMI 3.31 + 0.02392 x 141.7; 3 of the day's 96 quarter hours hold a reading.
    expect(m.mean_mg_dl).toBe(141.7);
    expect(m.gmi_percent).toBe(6.7);
    expect(m.coverage_percent).toBe(3.1);
    const values = [65, 120, 150, 100, 245, 52, 260];
    const sd = Math.sqrt(values.reduce((a, v) => a + (v - 141.71428571428572) ** 2, 0) / 6);
    expect(m.cv_percent).toBe(Math.round((sd / 141.71428571428572) * 1000) / 10);
  });
});

describe("glucose coverage in the patient's day", () => {
  const cgm = (sensor: string, extra: Record<string, unknown> = {}) => log("cgm_reading", sensor, { glucose_mg_dl: 110, sensor_timestamp: sensor, ...extra });
  /** A reading every 15 minutes from `from` (UTC) for `n` quarter hours. */
  const every15 = (from: string, n: number) => Array.from({ length: n }, (_, k) => cgm(new Date(Date.parse(from) + k * 900_000).toISOString()));

  it("counts slots from local midnight by elapsed time: a 25-hour day has 100, and readings 24 h apart hold two", () => {
    const d = payload(given([cgm("2026-11-01T04:10:00.000Z"), cgm("2026-11-02T04:10:00.000Z")], "America/New_York"), "glucose");
    // Slot 0 (00:10 EDT) and slot 96 (23:10 EST, 24 h 10 min after midnight), bit 0 of hex digits 0 and 24.
    expect(d.days).toMatchObject([{ date: "2026-11-01", readings: 2, day_slots: 100, covered_slots: 2, slots: `1${"0".repeat(23)}1` }]);
  });

  it("puts a reading at 23:59 local in the day's last slot", () => {
    const d = payload(given([cgm("2026-03-01T07:59:00.000Z")], "America/Los_Angeles"), "glucose");
    expect(d.days).toMatchObject([{ date: "2026-02-28", day_slots: 96, covered_slots: 1, slots: `${"0".repeat(23)}8` }]);
  });

  it("gives full coverage to a 23-hour or a 25-hour day read every 15 minutes, and counts a period against its days' slots", () => {
    const spring = payload(given(every15("2026-03-08T05:00:00.000Z", 92), "America/New_York"), "glucose");
    expect(spring.days).toMatchObject([{ date: "2026-03-08", day_slots: 92, covered_slots: 92, slots: "f".repeat(23) }]);
    expect(cgmMetrics(spring.days, { firstDay: "2026-03-08", lastDay: "2026-03-08", tz: "America/New_York" })?.coverage_percent).toBe(100);
    const fall = payload(given(every15("2026-11-01T04:00:00.000Z", 100), "America/New_York"), "glucose");
    expect(fall.days).toMatchObject([{ date: "2026-11-01", day_slots: 100, covered_slots: 100, slots: "f".repeat(25) }]);
    // Of the week's 6 x 96 + 100 slots.
    expect(cgmMetrics(fall.days, { firstDay: "2026-11-01", lastDay: "2026-11-07", tz: "America/New_York" })?.coverage_percent).toBe(14.8);
  });

  it("marks no slot for a reading put by its local_date on a day it was not taken in", () => {
    const d = payload(given([cgm("2026-03-01T23:00:00.000Z", { local_date: "2026-03-02" })], "America/New_York"), "glucose");
    expect(d.days).toMatchObject([{ date: "2026-03-02", readings: 1, day_slots: 96, covered_slots: 0, slots: "" }]);
  });
});

describe("vitals", () => {
  it("keeps the latest value of each measurement by measurement time, with a bounded history", () => {
    const s = given([
      log("vitals_measurement", "2025-03-02T10:00:00Z", { measurements: { systolic_bp_mmhg: 130, diastolic_bp_mmhg: 85, heart_rate_bpm: null }, context: { position: "sitting" }, source: "clinic", collection_datetime: null }),
      // Logged later but measured earlier: it does not replace the newer blood pressure.
      log("vitals_measurement", "2025-03-03T10:00:00Z", { measurements: { systolic_bp_mmhg: 150, weight_kg: 70 }, context: {}, source: "clinic", collection_datetime: "2025-03-01T09:00:00Z" }),
      // Payload times are written as the service writes its own (UTC, milliseconds), offsets resolved.
      log("weight_measurement", "2025-03-03T07:00:00.000Z", { weight_kg: 69.5, bmi: 23.1, sensor_timestamp: "2025-03-03T12:00:00+05:00" }),
    ]);
    const d = payload(s, "vitals");
    expect(d.latest).toEqual({
      systolic_bp_mmhg: { value: 130, timestamp: "2025-03-02T10:00:00Z", log_id: expect.any(String) },
      diastolic_bp_mmhg: { value: 85, timestamp: "2025-03-02T10:00:00Z", log_id: expect.any(String) },
      weight_kg: { value: 69.5, timestamp: "2025-03-03T07:00:00.000Z", log_id: expect.any(String) },
      bmi: { value: 23.1, timestamp: "2025-03-03T07:00:00.000Z", log_id: expect.any(String) },
    });
    expect(d.history.map((h) => h.timestamp)).toEqual(["2025-03-01T09:00:00.000Z", "2025-03-02T10:00:00Z", "2025-03-03T07:00:00.000Z"]);
    expect(d.daily_weight.map((w) => [w.date, w.weight_kg?.mean])).toEqual([["2025-03-01", 70], ["2025-03-03", 69.5]]);
  });
});

describe("re-sent device summaries", () => {
  const day = { start_datetime: "2025-03-01T00:00:00Z", end_datetime: "2025-03-01T23:59:59Z" };

  it("counts a re-sent daily activity summary once, the latest by event time, whatever the arrival order", () => {
    const first = log("activity_data", "2025-03-01T18:00:00Z", { steps: 5000, active_minutes: 20, local_date: "2025-03-01", period: day });
    const resent = log("activity_data", "2025-03-01T23:00:00Z", { steps: 9000, local_date: "2025-03-01", period: day });
    for (const logs of [[first, resent], [resent, first]]) {
      const d = payload(given(logs), "physical_activity");
      expect(d.days.map((x) => [x.date, x.entries, x.steps, x.active_minutes])).toEqual([["2025-03-01", 1, 9000, null]]);
      expect(d.recent.map((r) => r.steps)).toEqual([9000]);
    }
    // Applied out of order (no replay), the older log still loses.
    expect(payload(applyInArrivalOrder([resent, first]), "physical_activity").days[0]?.steps).toBe(9000);
  });

  it("treats a growing summary (same start, later end) and a same-day summary without a period as the same measurement", () => {
    const d = payload(given([
      log("activity_data", "2025-03-01T12:00:00Z", { steps: 3000, period: { start_datetime: day.start_datetime, end_datetime: "2025-03-01T12:00:00Z" } }),
      log("activity_data", "2025-03-01T20:00:00Z", { steps: 7000, period: { start_datetime: day.start_datetime, end_datetime: "2025-03-01T20:00:00Z" } }),
      log("activity_data", "2025-03-02T10:00:00Z", { steps: 100, local_date: "2025-03-02" }),
      log("activity_data", "2025-03-02T22:00:00Z", { steps: 8000, local_date: "2025-03-02" }),
    ]), "physical_activity");
    expect(d.days.map((x) => [x.date, x.entries, x.steps])).toEqual([["2025-03-01", 1, 7000], ["2025-03-02", 1, 8000]]);
  });

  it("keeps separate periods, and devices, apart", () => {
    const d = payload(given([
      log("activity_data", "2025-03-01T09:00:00Z", { steps: 1000, period: { start_datetime: "2025-03-01T08:00:00Z", end_datetime: "2025-03-01T08:30:00Z" } }),
      log("activity_data", "2025-03-01T13:00:00Z", { steps: 2000, period: { start_datetime: "2025-03-01T12:00:00Z", end_datetime: "2025-03-01T12:40:00Z" } }),
      log("activity_data", "2025-03-01T23:00:00Z", { steps: 4000, device_provider: "garmin", period: day }),
      log("activity_data", "2025-03-01T23:00:00Z", { steps: 4500, device_provider: "fitbit", period: day }),
    ]), "physical_activity");
    expect(d.days.map((x) => [x.entries, x.steps])).toEqual([[4, 11500]]);
  });

  it("moves a re-sent period to its new day, leaving no empty day behind", () => {
    const d = payload(given([
      log("activity_data", "2025-03-01T23:00:00Z", { steps: 5000, local_date: "2025-03-01", period: day }),
      log("activity_data", "2025-03-02T01:00:00Z", { steps: 5200, local_date: "2025-03-02", period: day }),
    ]), "physical_activity");
    expect(d.days.map((x) => [x.date, x.steps])).toEqual([["2025-03-02", 5200]]);
  });

  it("counts a re-sent sleep session once and keeps the latest night as latest when an older one is re-sent", () => {
    const night = { start_datetime: "2025-03-01T23:00:00Z", end_datetime: "2025-03-02T07:00:00Z" };
    const next = { start_datetime: "2025-03-02T23:00:00Z", end_datetime: "2025-03-03T06:30:00Z" };
    const s = given([
      log("sleep_data", "2025-03-02T07:10:00Z", { total_sleep_minutes: 400, period: night }),
      log("sleep_data", "2025-03-03T06:40:00Z", { total_sleep_minutes: 380, period: next }),
      log("sleep_data", "2025-03-03T09:00:00Z", { total_sleep_minutes: 410, deep_sleep_minutes: 70, period: night }),
    ]);
    const d = payload(s, "sleep");
    expect(d.days.map((x) => [x.date, x.sessions, x.total_sleep_minutes, x.deep_sleep_minutes])).toEqual([
      ["2025-03-02", 1, 410, 70], ["2025-03-03", 1, 380, null],
    ]);
    expect(d.recent.map((r) => r.total_sleep_minutes)).toEqual([380, 410]);
    expect(d.latest?.total_sleep_minutes).toBe(380);
    // The latest night re-sent replaces itself as latest.
    const again = payload(given([
      log("sleep_data", "2025-03-02T07:10:00Z", { total_sleep_minutes: 400, period: night }),
      log("sleep_data", "2025-03-02T08:00:00Z", { total_sleep_minutes: 405, period: night }),
    ]), "sleep");
    expect([again.days[0]?.sessions, again.days[0]?.total_sleep_minutes, again.latest?.total_sleep_minutes]).toEqual([1, 405, 405]);
  });
});

describe("distance units", () => {
  const walk = (unit: unknown, value = 5) => log("activity_data", "2025-03-01T12:00:00Z", { distance_travelled: { value, unit } });

  it("converts the common spellings of length units to metres, case-insensitively", () => {
    const m = (unit: string, value = 5) => payload(given([walk(unit, value)]), "physical_activity").days[0]!.distance_m;
    expect(["m", "Meter", "meters", "metre", "METRES"].map((u) => m(u))).toEqual([5, 5, 5, 5, 5]);
    expect(["km", "kilometer", "Kilometers", "kilometre", "kilometres"].map((u) => m(u))).toEqual([5000, 5000, 5000, 5000, 5000]);
    expect(["mi", "mile", "Miles"].map((u) => m(u, 1))).toEqual([1609.34, 1609.34, 1609.34]);
    expect(["yd", "yard", "yards", "ft", "foot", "feet"].map((u) => m(u, 10))).toEqual([9.14, 9.14, 9.14, 3.05, 3.05, 3.05]);
  });

  it("does not read a unit it cannot convert as metres, keeping the value and unit as sent", () => {
    const d = payload(given([walk("steps", 5), walk("furlong", 2), log("activity_data", "2025-03-01T13:00:00Z", { distance_travelled: { value: 1, unit: "km" } })]), "physical_activity");
    expect(d.days[0]?.distance_m).toBe(1000);
    expect(d.recent.map((r) => [r.distance_m, r.distance_travelled])).toEqual([
      [null, { value: 5, unit: "steps" }], [null, { value: 2, unit: "furlong" }], [1000, { value: 1, unit: "km" }],
    ]);
    expect(payload(given([walk("steps")]), "physical_activity").days[0]?.distance_m).toBeNull();
  });
});

describe("latest device readings", () => {
  it("keeps the glucose reading taken last by sensor_timestamp, not the one logged last", () => {
    const d = payload(given([
      log("cgm_reading", "2025-03-01T15:00:00Z", { glucose_mg_dl: 250, sensor_timestamp: "2025-03-01T15:00:00Z" }),
      log("cgm_reading", "2025-03-01T16:00:00Z", { glucose_mg_dl: 100, sensor_timestamp: "2025-03-01T10:00:00Z" }),
    ]), "glucose");
    expect(d.latest?.glucose_mg_dl).toBe(250);
  });

  it("keeps the SpO2 reading by sensor_timestamp and the heart-rate summary by period start", () => {
    const d = payload(given([
      log("spo2_reading", "2025-03-01T15:00:00Z", { spo2_percent: 97, sensor_timestamp: "2025-03-01T15:00:00Z" }),
      log("spo2_reading", "2025-03-01T16:00:00Z", { spo2_percent: 88, sensor_timestamp: "2025-03-01T10:00:00+01:00" }),
      log("heart_rate_data", "2025-03-03T08:00:00Z", { avg_bpm: 70, period: { start_datetime: "2025-03-02T00:00:00Z" } }),
      log("heart_rate_data", "2025-03-03T09:00:00Z", { avg_bpm: 90, period: { start_datetime: "2025-03-01T00:00:00Z" } }),
    ]), "heart");
    expect(d.latest.spo2?.values.spo2_percent).toBe(97);
    expect(d.latest.heart_rate?.values.avg_bpm).toBe(70);
  });
});
