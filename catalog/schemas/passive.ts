import type { Static } from "@sinclair/typebox";
import { checkPeriod, entry, issue, type CatalogEntry, type PayloadIssue } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import { Amount, Count, DateStr, DateTimeStr, Enum, Extensions, Int, List, Num, Obj, Opt, Percent, Period, ReqStr, Str } from "./common.js";

// Device-derived values are physical quantities, so they are bounded below by 0.
const device = {
  device_provider: Opt(Str({ description: "For example garmin, fitbit, apple_health" })),
  extensions: Opt(Extensions),
};
const period = { period: Opt(Period) };
const refinePeriod = (p: { period?: { start_datetime?: string; end_datetime?: string } }) => checkPeriod(p.period, ["period"]);

export const HeartRateData = Obj(
  {
    resting_bpm: Opt(Amount()),
    avg_bpm: Opt(Amount()),
    min_bpm: Opt(Amount({ description: "Not above max_bpm" })),
    max_bpm: Opt(Amount()),
    avg_hrv_sdnn_ms: Opt(Amount()),
    irregular_events_count: Opt(Count()),
    ...period,
    ...device,
  },
  { description: "No field is required." },
);

export function refineHeartRate(p: Static<typeof HeartRateData>): PayloadIssue[] {
  const out = refinePeriod(p);
  if (p.min_bpm !== undefined && p.max_bpm !== undefined && p.min_bpm > p.max_bpm) {
    out.push(issue(["min_bpm"], `min_bpm ${p.min_bpm} is above max_bpm ${p.max_bpm}`, p.min_bpm));
  }
  return out;
}

export const SleepData = Obj(
  {
    total_sleep_minutes: Opt(Amount()),
    deep_sleep_minutes: Opt(Amount()),
    rem_sleep_minutes: Opt(Amount()),
    light_sleep_minutes: Opt(Amount()),
    awake_minutes: Opt(Amount({ description: "Wake after sleep onset" })),
    ...period,
    ...device,
  },
  { description: "One sleep session per event; period is the full sleep window." },
);

export const ActivityData = Obj(
  {
    steps: Opt(Count()),
    walks: Opt(Count()),
    walking_minutes: Opt(Amount()),
    time_at_home_percent: Opt(Percent()),
    distance_travelled: Opt(
      Obj(
        { value: Amount(), unit: ReqStr({ description: "For example meters, feet, km" }) },
        { description: "Normalised to metres by the server, so value and unit are both needed." },
      ),
    ),
    active_minutes: Opt(Count()),
    sedentary_minutes: Opt(Count()),
    calories_total: Opt(Amount()),
    calories_active: Opt(Amount()),
    floors_climbed: Opt(Count()),
    exercise_sessions: Opt(List(Obj({}, { description: "Item fields are not fixed by the catalog; kept as sent." }))),
    ...period,
    local_date: Opt(DateStr({ description: "YYYY-MM-DD in the patient's local timezone; preferred anchor for per-day grouping" })),
    utc_offset_seconds: Opt(Int({ minimum: -43200, maximum: 50400, description: "UTC offset in seconds, for example -18000 (UTC-12:00 to UTC+14:00)" })),
    ...device,
  },
  { description: "One measurement period per event (a daily summary or one walking bout); set period." },
);

export const CgmReading = Obj({
  glucose_mg_dl: Amount({ description: "mg/dL; mmol/L = mg/dL / 18.018" }),
  trend_arrow: Opt(Str({ description: "For example rising, falling, stable" })),
  glucose_flag: Opt(Enum(["high", "low", "normal"])),
  sensor_timestamp: DateTimeStr(),
  ...device,
});

export const Spo2Reading = Obj({
  spo2_percent: Percent(),
  pulse_bpm: Opt(Amount()),
  measurement_context: Opt(Enum(["resting", "during_sleep", "activity"])),
  sensor_timestamp: Opt(DateTimeStr({ description: "ISO 8601 UTC; always include" })),
  ...device,
});

export const WeightMeasurement = Obj({
  weight_kg: Amount(),
  body_fat_percent: Opt(Percent()),
  bmi: Opt(Num({ description: "As returned by the device" })),
  sensor_timestamp: Opt(DateTimeStr()),
  ...device,
});

export const passiveEntries = {
  heart_rate_data: entry(HeartRateData, refineHeartRate),
  sleep_data: entry(SleepData, refinePeriod),
  activity_data: entry(ActivityData, refinePeriod),
  cgm_reading: entry(CgmReading),
  spo2_reading: entry(Spo2Reading),
  weight_measurement: entry(WeightMeasurement),
} satisfies Record<(typeof LOG_GROUPS)["passive"][number], CatalogEntry>;
