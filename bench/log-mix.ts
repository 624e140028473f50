import type { LogRecord } from "../readmodels/log-record.js";

/** Realistic payloads of a dozen common log types: the mix the benches send. */
export const LOG_MIX: { log_type: string; payload: (i: number) => Record<string, unknown> }[] = [
  { log_type: "symptom_report", payload: (i) => ({ instrument: "esas_r", symptoms: [{ name: "pain", score: i % 11 }, { name: "nausea", score: (i >> 1) % 11 }], source: "patient_app" }) },
  {
    log_type: "vitals_measurement",
    payload: (i) => ({
      measurements: { systolic_bp_mmhg: 110 + (i % 40), diastolic_bp_mmhg: 70 + (i % 20), heart_rate_bpm: 60 + (i % 30) },
      context: { position: "sitting", fasting: null },
      source: { type: "device", name: "omron" },
      collection_datetime: "2026-05-01T08:00:00Z",
    }),
  },
  { log_type: "heart_rate_data", payload: (i) => ({ resting_bpm: 55 + (i % 20), avg_bpm: 70, max_bpm: 130, period: { start_datetime: "2026-05-01T00:00:00Z", end_datetime: "2026-05-02T00:00:00Z" }, device_provider: "garmin" }) },
  { log_type: "cgm_reading", payload: (i) => ({ glucose_mg_dl: 80 + (i % 120), trend_arrow: "stable", glucose_flag: "normal", sensor_timestamp: "2026-05-01T08:05:00Z", device_provider: "dexcom" }) },
  { log_type: "medication_adherence", payload: (i) => ({ medication_adherence: [{ status: i % 5 === 0 ? "skipped" : "taken", rxnorm_cui: "860975", scheduled_time: "2026-05-01T08:00:00Z" }] }) },
  { log_type: "user_login", payload: () => ({}) },
  { log_type: "content_interaction", payload: (i) => ({ content_type: "article", action: "viewed", content_id: `c-${i % 500}`, dwell_time_seconds: 30 + (i % 200) }) },
  {
    log_type: "lab_results",
    payload: (i) => ({ collection_datetime: "2026-05-01T07:00:00Z", results: [{ loinc_code: "2345-7", value_numeric: 90 + (i % 60), unit: "mg/dL", abnormal_flag: i % 7 === 0 ? "H" : "N", result_status: "final" }] }),
  },
  { log_type: "sleep_data", payload: (i) => ({ total_sleep_minutes: 360 + (i % 120), deep_sleep_minutes: 80, rem_sleep_minutes: 90, period: { start_datetime: "2026-04-30T22:30:00Z", end_datetime: "2026-05-01T06:30:00Z" }, device_provider: "fitbit" }) },
  { log_type: "activity_data", payload: (i) => ({ steps: 2000 + (i % 9000), active_minutes: 30, local_date: "2026-05-01", period: { start_datetime: "2026-05-01T00:00:00Z", end_datetime: "2026-05-02T00:00:00Z" } }) },
  { log_type: "mood_report", payload: (i) => ({ moods: [{ mood: i % 2 ? "calm" : "anxious", intensity: i % 11 }] }) },
  { log_type: "questionnaire_item_response", payload: (i) => ({ question: "How are you feeling today?", response_value: i % 5, response_scale_max: 4, context: "check_in" }) },
];

/**
 * Stored logs of the mix for `patients` patients (`p0`, `p1`, …), `perPatient` each, one
 * second apart in one sequence across patients (so types rotate through each patient's
 * history). For benches of the pure fold.
 */
export function mixLogRecords(patients: number, perPatient: number): LogRecord[][] {
  const base = Date.UTC(2026, 4, 1);
  let n = 0;
  return Array.from({ length: patients }, (_, p) =>
    Array.from({ length: perPatient }, (_, i) => {
      const m = LOG_MIX[n % LOG_MIX.length]!;
      const k = n++;
      const ts = new Date(base + k * 1000).toISOString();
      return { id: `log_${p}_${i}`, log_type: m.log_type, patient_id: `p${p}`, timestamp: ts, ingested_at: ts, payload: m.payload(k) } as unknown as LogRecord;
    }),
  );
}
