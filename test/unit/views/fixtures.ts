import type { LogRecord } from "../../../readmodels/log-record.js";
import type { View, ViewBlock } from "../../../readmodels/views/index.js";
import { at, log } from "../readmodels/given.js";

/**
 * Realistic logs for one patient in March 2025. Every view's latest input log is on
 * 2025-03-20, so its week segment covers the calendar days 14 to 20.
 */
export const AS_OF = at(20, 12);

const report = (t: string, instrument: string, symptoms: Record<string, unknown>[]) => log("symptom_report", t, { instrument, symptoms });

export function symptomLogs() {
  const first = report(at(1), "esas_r", [{ name: "Pain", score: 4 }, { name: "Nausea", score: 5 }, { name: "Fatigue", score: 3 }]);
  const nauseaGone = report(at(5), "esas_r", [{ name: "nausea", score: 0 }]);
  const painBefore = report(at(10), "esas_r", [{ name: "pain", score: 5 }]);
  const painWorse = report(at(15), "esas_r", [{ name: "pain", score: 8 }, { name: "fatigue", score: 3 }]);
  const diarrhea = report(at(16), "pro_ctcae", [{ name: "Diarrhea", score: 3, meddra_code: "10012735" }]);
  const fatigueGone = report(at(18), "esas_r", [{ name: "fatigue", score: 0 }]);
  const painDetail = log("symptom_detail", at(17), { symptom_type: "pain", detail_type: "location", response: "lower back" });
  const pendingDetail = log("symptom_detail", at(19), { symptom_type: "dizziness", detail_type: "trigger", response: "standing up" });
  const freeText = log("symptom_free_text", at(19), { text: "Felt dizzy after standing up", associated_symptoms: [{ name: "dizziness" }] });
  const energyOld = log("health_metric", at(2), { metric_type: "energy", score: 7, scale_min: 0, scale_max: 10 });
  const energy1 = log("health_metric", at(14), { metric_type: "energy", score: 4, scale_min: 0, scale_max: 10 });
  const energy2 = log("health_metric", at(20, 12), { metric_type: "energy", score: 6, scale_min: 0, scale_max: 10 });
  const moodOld = log("mood_report", at(3), { moods: [{ mood: "anxious", intensity: 5 }] });
  const mood = log("mood_report", at(17), { moods: [{ mood: "anxious", intensity: 7 }, { mood: "hopeful", intensity: 3 }] });
  const logs: LogRecord[] = [first, nauseaGone, painBefore, painWorse, diarrhea, fatigueGone, painDetail, pendingDetail, freeText, energyOld, energy1, energy2, moodOld, mood];
  return { logs, first, nauseaGone, painBefore, painWorse, diarrhea, fatigueGone, painDetail, pendingDetail, freeText, energyOld, energy1, energy2, moodOld, mood };
}

const meds = (t: string, medications: Record<string, unknown>[]) => log("medication_list_update", t, { medications, source: "ehr" });
const dose = (t: string, d: Record<string, unknown>) => log("medication_adherence", t, { medication_adherence: [d] });

export function medicationLogs() {
  const list = meds(at(1, 8), [
    { action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", route: "oral", schedule_times: ["08:00", "20:00"], start_date: "2025-01-10", prescribed_by: { name: "Dr. Rao" } },
    { action: "add", medication_name: "Lisinopril", rxnorm_cui: "29046", dose: "10", dose_unit: "mg", frequency: "daily", schedule_times: ["09:00"] },
  ]);
  const oldDose = dose(at(10, 8), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(10, 8) });
  const onTime = dose(at(15, 8, 10), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(15, 8) });
  const skipped = dose(at(16, 8), { status: "skipped", medication_name: "metformin", scheduled_time: at(16, 8) });
  const late = dose(at(17, 10), { status: "taken", rxnorm_cui: "860975", scheduled_time: at(17, 8) });
  const lisinopril = dose(at(20, 12), { status: "taken", rxnorm_cui: "29046", scheduled_time: at(20, 12) });
  const oldAe = log("medication_adverse_event", at(5), { events: [{ medication_identifier: "860975", description: "nausea", severity: "mild" }] });
  const newAe = log("medication_adverse_event", at(19), { events: [{ medication_identifier: "Lisinopril", description: "dizziness", severity: "moderate", onset_date: "2025-03-18" }] });
  const logs = [list, oldDose, onTime, skipped, late, lisinopril, oldAe, newAe];
  return { logs, list, oldDose, onTime, skipped, late, lisinopril, oldAe, newAe };
}

const labs = (t: string, results: Record<string, unknown>[], extra: Record<string, unknown> = {}) => log("lab_results", t, { results, ...extra });

export function labLogs() {
  const baseline = labs(at(1), [
    { loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 13.2, unit: "g/dL", abnormal_flag: "N" },
    { loinc_code: "2823-3", test_name: "Potassium", value_numeric: 4.1, unit: "mmol/L", reference_range_low: 3.5, reference_range_high: 5.1 },
  ]);
  const hbOld = labs(at(10), [{ loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 11, unit: "g/dL", abnormal_flag: "L" }]);
  const week = labs(at(16), [
    { loinc_code: "718-7", test_name: "Hemoglobin", value_numeric: 9.1, unit: "g/dL", abnormal_flag: "L" },
    { loinc_code: "2823-3", test_name: "Potassium", value_numeric: 6.9, unit: "mmol/L", abnormal_flag: "HH", reference_range_low: 3.5, reference_range_high: 5.1 },
  ]);
  const glucose = labs(at(20, 12), [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 60, unit: "mg/dL", reference_range_low: 70, reference_range_high: 99 }], { collection_datetime: at(20, 8) });
  return { logs: [baseline, hbOld, week, glucose], baseline, hbOld, week, glucose };
}

export function vitalLogs() {
  const old = log("vitals_measurement", at(2), { measurements: { systolic_bp_mmhg: 150, diastolic_bp_mmhg: 95, heart_rate_bpm: 80 }, context: { position: "sitting" } });
  const clinic = log("vitals_measurement", at(15), { measurements: { systolic_bp_mmhg: 130, diastolic_bp_mmhg: 85, heart_rate_bpm: 72, spo2_percent: 97 }, context: { position: "sitting" } });
  const home = log("vitals_measurement", at(17), { measurements: { systolic_bp_mmhg: 126, diastolic_bp_mmhg: 80 }, context: {} });
  const wOld = log("weight_measurement", at(3, 7), { weight_kg: 72 });
  const w1 = log("weight_measurement", at(14, 7), { weight_kg: 70.4 });
  const w2 = log("weight_measurement", at(17, 7), { weight_kg: 70 });
  const w3 = log("weight_measurement", at(20, 12), { weight_kg: 69.5 });
  return { logs: [old, clinic, home, wOld, w1, w2, w3], old, clinic, home, wOld, w1, w2, w3 };
}

export function profileLogs() {
  const demo = log("demographics", at(1), { name: "Ada Lovelace", sex: "female", language: "en", source: "intake" });
  const cancer = log("condition", at(2), { disease_type: "Breast cancer", stage: "II", icd10_codes: ["C50.9"], is_primary: true, diagnosis_date: "2024-11-02" });
  const htn = log("condition", at(2, 13), { disease_type: "Hypertension" });
  const phase = log("treatment_phase", at(4), { new_phase: "active_treatment", effective_date: "2025-03-04", changed_by: "clinician" });
  const allergy = log("allergy_intolerance", at(3), { allergies: [{ allergen: "Penicillin", category: "medication", criticality: "high", reactions: ["hives"] }] });
  const team = log("care_team", at(3, 13), { members: [{ action: "add", role: "oncologist", name: "Dr. Rao", organization: "City Cancer Center" }] });
  const plan = log("insurance", at(5), { payer: "Acme Health", plan_name: "Gold", member_id: "M123", rank: "primary" });
  const pharmacy = log("pharmacy", at(5, 13), { name: "Corner Pharmacy", type: "retail", phone: "+15550111" });
  const prefs = log("preferences", at(6), { tone: "warm", reading_level: "plain", notification_preferences: { push: true, sms: false } });
  const social = log("social_determinants", at(6, 13), { living_situation: "alone", transportation_access: "limited" });
  const flu = log("immunization", at(7), { vaccine_name: "Influenza", cvx_code: "141", status: "completed", occurrence_date: "2024-10-01" });
  const mother = log("family_history", at(8), { relationship: "mother", conditions: [{ condition: "breast cancer", onset_age_years: 52 }] });
  const watch = log("device", at(20, 12), { device_id: "SN-1", device_type: "wearable", name: "Forerunner", manufacturer: "Garmin", status: "active" });
  const logs = [demo, cancer, htn, phase, allergy, team, plan, pharmacy, prefs, social, flu, mother, watch];
  return { logs, demo, cancer, htn, phase, allergy, team, plan, pharmacy, prefs, social, flu, mother, watch };
}

export function engagementLogs() {
  const oldLogin = log("user_login", at(10, 8), {});
  const login1 = log("user_login", at(15, 8), {});
  const article = log("content_interaction", at(15, 9), { content_type: "article", action: "viewed", dwell_time_seconds: 30 });
  const video = log("content_interaction", at(16, 9), { content_type: "video", action: "viewed" });
  const dismissed = log("content_interaction", at(16, 10), { content_type: "video", action: "dismissed" });
  const reminder = log("notification_interaction", at(17), { notification_type: "medication_reminder", action: "opened" });
  const login2 = log("user_login", at(18, 8), {});
  const task = log("task_outcome", at(19), { task_type: "checkin", action: "completed" });
  const diaryOld = log("feature_usage", at(2), { feature_name: "diary", dwell_time_seconds: 600 });
  const diary = log("feature_usage", at(19, 13), { feature_name: "diary", dwell_time_seconds: 120 });
  const turn1 = log("conversation_turn", at(12, 9), { conversation_id: "c1", turn_index: 0, speaker_label: "agent", text: "How are you?", channel: "chat" });
  const turn2 = log("conversation_turn", at(12, 9, 1), { conversation_id: "c1", turn_index: 1, speaker_label: "patient", text: "Tired, slept badly." });
  const ended = log("conversation", at(12, 9, 5), { conversation_id: "c1", duration_seconds: 300, flagged: true, flag_reason: "fatigue" });
  const memory = log("memory_report", at(20, 12), { content: "Enjoys gardening.", type: "interests_concerns" });
  const logs = [oldLogin, login1, article, video, dismissed, reminder, login2, task, diaryOld, diary, turn1, turn2, ended, memory];
  return { logs, oldLogin, login1, article, video, dismissed, reminder, login2, task, diaryOld, diary, turn1, turn2, ended, memory };
}

const phq = (t: string, total: number, extra: Record<string, unknown> = {}, scores: Record<string, unknown> = {}) =>
  log("questionnaire_response", t, {
    instrument: { instrument_id: "PHQ-9", instrument_type: "validated" },
    administration: { administration_mode: "patient_self_report" },
    scores: { total_score: total, total_score_max: 27, severity_category: total >= 15 ? "moderately_severe" : "moderate", ...scores },
    ...extra,
  });

export function questionnaireLogs() {
  const phqOld = phq(at(1), 12);
  const gad = log("questionnaire_response", at(5), { instrument: { instrument_id: "GAD-7" }, scores: { total_score: 5, total_score_max: 21, severity_category: "mild" } });
  const phqNew = phq(at(16), 19, { change: { change_classification: "worsened", minimally_important_difference: 5 } }, { clinically_significant: true });
  const item = log("questionnaire_item_response", at(20, 12), { question: "How is your pain today?", response_value: 3, response_scale_max: 10 });
  return { logs: [phqOld, gad, phqNew, item], phqOld, gad, phqNew, item };
}

export function deviceLogs() {
  const hrOld = log("heart_rate_data", at(5, 23), { resting_bpm: 58, avg_bpm: 70, local_date: "2025-03-05" });
  const hr = log("heart_rate_data", at(15, 23), { resting_bpm: 60, avg_bpm: 72, min_bpm: 50, max_bpm: 130, avg_hrv_sdnn_ms: 45, local_date: "2025-03-15" });
  const spo2Low = log("spo2_reading", at(17, 3), { spo2_percent: 88, sensor_timestamp: at(17, 3) });
  const spo2 = log("spo2_reading", at(18, 3), { spo2_percent: 95, sensor_timestamp: at(18, 3) });
  const sleep = log("sleep_data", at(16, 7), { total_sleep_minutes: 420, deep_sleep_minutes: 80, period: { start_datetime: at(15, 23), end_datetime: at(16, 7) } });
  const steps1 = log("activity_data", at(16, 20), { steps: 6500, active_minutes: 40, local_date: "2025-03-16" });
  const steps2 = log("activity_data", at(19, 20), { steps: 4000, local_date: "2025-03-19" });
  const cgmOld = log("cgm_reading", at(3, 8), { glucose_mg_dl: 50, sensor_timestamp: at(3, 8) });
  const cgmLow = log("cgm_reading", at(18, 8), { glucose_mg_dl: 65, sensor_timestamp: at(18, 8) });
  const cgmHigh = log("cgm_reading", at(18, 9), { glucose_mg_dl: 270, sensor_timestamp: at(18, 9) });
  const cgm = log("cgm_reading", at(20, 12), { glucose_mg_dl: 120, sensor_timestamp: at(20, 12), trend_arrow: "flat" });
  const logs = [hrOld, hr, spo2Low, spo2, sleep, steps1, steps2, cgmOld, cgmLow, cgmHigh, cgm];
  return { logs, hrOld, hr, spo2Low, spo2, sleep, steps1, steps2, cgmOld, cgmLow, cgmHigh, cgm };
}

/** Every fixture's logs: one patient with data in every view. */
export function allLogs(): LogRecord[] {
  return [symptomLogs, medicationLogs, labLogs, vitalLogs, profileLogs, engagementLogs, questionnaireLogs, deviceLogs].flatMap((f) => f().logs);
}

/** [id, segment] of every block, temp ones last: the shape of a view at a glance. */
export function shape(v: View): [string, string][] {
  return [...v.blocks, ...v.temp].map((b) => [b.id, b.segment]);
}

export function blockOf(v: View, id: string): ViewBlock {
  const b = [...v.blocks, ...v.temp].find((x) => x.id === id);
  if (!b) throw new Error(`block ${id} not in ${v.view_type}: ${shape(v).map(([i]) => i).join(", ")}`);
  return b;
}
