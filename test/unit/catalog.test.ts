import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  LOG_TYPES, LOG_TYPE_ALIASES, listLogTypes, logTypeInfo, resolveLogType, validatePayload, type LogType,
} from "../../catalog/index.js";

const T = "2024-05-01T08:00:00Z";
const period = { start_datetime: "2024-05-01T00:00:00Z", end_datetime: "2024-05-02T00:00:00Z" };

/** One realistic valid payload per type; typed so a new catalog type fails to compile here. */
const VALID: Record<LogType, Record<string, unknown>> = {
  symptom_report: {
    instrument: "pro_ctcae", recall_period_days: 7, source: { type: "patient", reported_by: "caregiver" },
    symptoms: [{ name: "nausea", score: 3, frequency: 2, interference: 1, snomed_code: "422587007", onset_date: "2024-04-28" }],
  },
  mood_report: { moods: [{ mood: "anxious", intensity: 6 }, { mood: "calm", intensity: null }, { mood: "tired" }], source: "app" },
  symptom_free_text: { text: "Felt dizzy after lunch", associated_symptoms: [{ name: "dizziness", snomed_code: "404640003" }] },
  symptom_detail: { symptom_type: "pain", detail_type: "location", question: "Where does it hurt?", response: "lower back" },
  functional_class: { instrument: "ecog", class: 1, reported_by: "clinician", change_from_prior: { previous_class: 2, date: "2024-03-01" } },
  health_metric: { metric_type: "energy", score: 3, scale_min: 1, scale_max: 5 },
  lab_results: {
    collection_datetime: T, panel_loinc_code: null, performing_lab: { name: "Quest", clia_number: "05D0642827" },
    results: [
      { loinc_code: "2345-7", value_numeric: 98, unit: "mg/dL", abnormal_flag: "N", reference_range_low: 70, reference_range_high: 99, result_status: "final" },
      { test_name: "Urine culture", value_string: "negative", unit: "" },
    ],
  },
  vitals_measurement: {
    measurements: { systolic_bp_mmhg: 128, diastolic_bp_mmhg: 82, spo2_percent: null },
    context: { position: "sitting", fasting: null }, source: { type: "device", name: "Omron" }, collection_datetime: T,
  },
  clinical_note: {
    note_type: "progress_note", loinc_code: "11506-3", authored_by: { name: "Dr Lee", role: "oncologist" },
    authored_date: "2024-05-01", encounter_id: "enc-1", source: "ehr", sections: [{ section_label: "Assessment", content: "Stable." }],
  },
  clinical_finding: { findings: [{ description: "No edema", body_site: "ankles", negation: true, recorded_at: T }] },
  procedure_result: { results: [{ result_type: "pathology", test_name: "Biopsy", value_string: "benign", performed_at: T }] },
  genomic_variant: { variants: [{ gene: "BRCA1", variant_designation: "c.68_69del", classification: "pathogenic", reported_at: T }] },
  imaging_result: { study_date: "2024-04-30", findings: [{ modality: "CT", body_region: "chest", impression: "No change" }] },
  clinical_measurement: { measurements: [{ measurement_type: "ejection_fraction", value_numeric: 55, unit: "%", measured_at: T }] },
  treatment_response_assessment: {
    assessments: [{ treatment_description: "FOLFOX", response_category: "PR", assessment_method: "RECIST 1.1", reference_date: "2024-01-10" }],
  },
  care_encounter: { encounter_id: "enc-1", status: "finished", encounter_class: "ambulatory", period },
  clinical_plan_item: { plan_item_id: "pi-1", item_type: "lab", description: "CBC before cycle 3", status: "scheduled", scheduled_date: "2024-05-10" },
  unstructured_report: { report_id: "doc-9", report_type: "discharge_letter", content: "Discharged home in good condition." },
  procedure: { procedure_name: "Port placement", procedure_code: "36561", code_system: "CPT", status: "completed", performed_date: "2024-02-02" },
  care_goal: { goal_id: "g-1", description: "Walk 30 minutes a day", lifecycle_status: "active", target: { measure: "walking_minutes", value_numeric: 30 } },
  care_action: { action_id: "a-1", action_type: "outreach_call", status: "completed", performed_at: T, goal_id: "g-1" },
  user_login: {},
  user_logout: { extensions: { device: "ios" } },
  content_interaction: { content_type: "article", action: "viewed", content_id: "c-1", dwell_time_seconds: 42 },
  notification_interaction: { notification_type: "medication_reminder", action: "opened", delivered_at: T, time_to_open_seconds: 30 },
  task_outcome: { task_type: "checkin", action: "completed", completion_time_seconds: 95 },
  interaction_feedback: { target_type: "message", target_id: "m-1", feedback_type: "thumbs_up" },
  feature_usage: { feature_name: "symptom_tracker", session_id: "s-1", dwell_time_seconds: 120 },
  heart_rate_data: { resting_bpm: 58, avg_bpm: 72, min_bpm: 50, max_bpm: 150, period, device_provider: "garmin" },
  sleep_data: { total_sleep_minutes: 420, deep_sleep_minutes: 90, period, device_provider: "fitbit" },
  activity_data: {
    steps: 8000, time_at_home_percent: 65.5, distance_travelled: { value: 5.2, unit: "km" }, exercise_sessions: [{ kind: "run" }],
    period, local_date: "2024-05-01", utc_offset_seconds: -18000,
  },
  cgm_reading: { glucose_mg_dl: 112, trend_arrow: "stable", glucose_flag: "normal", sensor_timestamp: T },
  spo2_reading: { spo2_percent: 97, measurement_context: "resting", sensor_timestamp: T, device_provider: "apple_health" },
  weight_measurement: { weight_kg: 71.4, body_fat_percent: 22.1, sensor_timestamp: T },
  demographics: {
    name: "Ana Ruiz", dob: "1961-07-14", telecom: [{ system: "phone", value: "+15551234", use: "mobile", rank: 1 }],
    addresses: [{ city: "Austin", country: "US" }], identifiers: [{ system: "mrn", value: "12345", type: "MRN" }], language: "es-MX",
  },
  condition: { disease_type: "breast_cancer", stage: "II", diagnosis_date: "2023-11-02T00:00:00Z", icd10_codes: ["C50.911"], clinical_status: "active", is_primary: true },
  preferences: { tone: "warm", things_to_track: ["sleep"], notification_preferences: { push: true, sms: false } },
  emergency_contact: { name: "Luis Ruiz", relationship: "son", phone: "+15550000" },
  care_team: { members: [{ action: "add", role: "oncologist", name: "Dr Lee", npi: "1234567890" }] },
  insurance: { payer: "Aetna", member_id: "W123", rank: "primary", action: "add" },
  social_determinants: { living_situation: "alone", transportation_access: "limited" },
  pharmacy: { name: "CVS", type: "retail", address: { city: "Austin" } },
  treatment_phase: { previous_phase: "active_treatment", new_phase: "surveillance", effective_date: "2024-05-01", changed_by: "clinician" },
  allergy_intolerance: {
    allergies: [{ allergen: "penicillin", category: "medication", criticality: "high", clinical_status: "active", reactions: ["hives"], recorded_date: "2020-01-01", action: "add" }],
  },
  immunization: { vaccine_name: "Influenza", cvx_code: "150", status: "completed", occurrence_date: "2023-10-01", dose_number: 1 },
  family_history: { relationship: "mother", conditions: [{ condition: "breast cancer", onset_age_years: 52 }] },
  device: { device_id: "SN-991", device_type: "cgm", status: "active", manufacturer: "Dexcom", start_date: "2024-01-01" },
  medication_adherence: { medication_adherence: [{ status: "taken", rxnorm_cui: "197361", scheduled_time: T, dose_amount: 1, dose_unit: "tablet" }] },
  medication_list_update: {
    medications: [
      { action: "add", medication_name: "Metformin", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"], adherence_window_minutes: 60, start_date: "2024-05-01", form: "" },
      { action: "delete", rxnorm_cui: "860975" },
    ],
  },
  medication_adverse_event: { events: [{ medication_identifier: "oxaliplatin", severity: "moderate", onset_date: "2024-04-20", recorded_at: T }] },
  conversation: {
    conversation_id: "conv-1", channel: "voice", duration_seconds: 300, language: "en-US",
    participants: [{ role: "patient", user_id: "u-1" }], transcript: [{ speaker_label: "agent", text: "How are you?" }], flagged: false,
  },
  conversation_turn: { conversation_id: "conv-2", turn_index: 0, speaker_label: "patient", text: "Hi" },
  memory_report: { content: "Enjoys gardening on weekends", type: "interests_concerns" },
  questionnaire_response: {
    instrument: { instrument_id: "PHQ-9", instrument_type: "validated", instrument_version: "1.0", recall_period_days: 14 },
    administration: { administration_mode: "clinician_administered", platform: "web", administered_by: { name: "RN Park", role: "nurse" } },
    item_responses: [{ item_number: 1, response_value: 2, response_scale_max: 3 }, { item_number: 2, response_value: 1 }],
    scores: { total_score: 3, total_score_max: 27, severity_category: "minimal", domain_scores: { mood: 3 } },
    change: { prior_score: 8, prior_date: "2024-03-01", change: -5, change_classification: "improved" },
  },
  questionnaire_item_response: { question: "Did you sleep well?", response_value: true, context: "check_in", item_number: 3 },
};

describe("log catalog", () => {
  it.each(LOG_TYPES.map((t) => [t]))("accepts a valid %s payload", (type) => {
    expect(validatePayload(type, VALID[type])).toEqual([]);
  });

  it("lists all 55 types, each with a schema, group and lifecycle flag", () => {
    const all = listLogTypes();
    expect(all).toHaveLength(55);
    expect(new Set(all.map((i) => i.log_type)).size).toBe(55);
    for (const info of all) {
      expect(info.schema).toMatchObject({ type: "object" });
      expect(typeof info.lifecycle_tracked).toBe("boolean");
    }
    expect(all.filter((i) => i.lifecycle_tracked).map((i) => i.log_type).sort()).toEqual(
      ["allergy_intolerance", "condition", "mood_report", "symptom_report", "treatment_phase"],
    );
  });

  it("publishes schemas that survive a JSON round trip, as GET /v1/log-types serves them", () => {
    const json = JSON.parse(JSON.stringify(listLogTypes()));
    expect(json[0].schema.properties.symptoms.items.required).toContain("score");
  });

  it("marks the nine types the spec only names as service design", () => {
    const designed = listLogTypes().filter((i) => String(i.schema.description ?? "").startsWith("Service design:"));
    expect(designed.map((i) => i.log_type).sort()).toEqual(
      ["care_action", "care_encounter", "care_goal", "clinical_plan_item", "device", "family_history", "immunization", "procedure", "unstructured_report"],
    );
  });

  it("takes remove and delete as one action on every multi-entry type, as the contract says", () => {
    for (const action of ["remove", "delete"]) {
      expect(validatePayload("medication_list_update", { medications: [{ action, rxnorm_cui: "29046" }] }), action).toEqual([]);
      expect(validatePayload("insurance", { ...VALID.insurance, action }), action).toEqual([]);
      expect(validatePayload("emergency_contact", { action }).map((i) => i.path.join(".")), action).toEqual(["name"]);
    }
    expect(validatePayload("insurance", { ...VALID.insurance, action: "erase" })).not.toEqual([]);
  });

  it("accepts unknown extra keys at the top level and inside entries", () => {
    const payload = { ...VALID.symptom_report, client_ref: "x", symptoms: [{ name: "pain", score: 1, vendor_flag: true }] };
    expect(validatePayload("symptom_report", { ...payload, instrument: "ctcae" })).toEqual([]);
    expect(validatePayload("user_login", { app_version: "3.2.1" })).toEqual([]);
    expect(validatePayload("vitals_measurement", { ...VALID.vitals_measurement, source: { type: "device", firmware: "1.2" } })).toEqual([]);
  });

  it("accepts source as a legacy string or a structured object, and refuses other shapes", () => {
    expect(validatePayload("symptom_free_text", { text: "x", source: "patient_app" })).toEqual([]);
    expect(validatePayload("symptom_free_text", { text: "x", source: { type: "patient", id: "p1", system: "app" } })).toEqual([]);
    expect(validatePayload("symptom_free_text", { text: "x", source: 42 })).toEqual([
      { path: ["source"], message: "must be a string or an object", value: 42 },
    ]);
  });

  it("refuses a payload that is not an object", () => {
    expect(validatePayload("user_login", [])).toEqual([{ path: [], message: "must be an object", value: [] }]);
    expect(validatePayload("user_login", null)[0]).toMatchObject({ path: [], message: "must be an object" });
  });

  it("reports at most one issue per path and at most 20 issues", () => {
    const symptoms = Array.from({ length: 30 }, () => ({ name: "pain" }));
    const issues = validatePayload("symptom_report", { instrument: "esas_r", symptoms });
    expect(issues).toHaveLength(20);
    expect(issues[0]).toEqual({ path: ["symptoms", 0, "score"], message: "is required", value: { name: "pain" } });
    expect(new Set(issues.map((i) => JSON.stringify(i.path))).size).toBe(20);
  });
});

describe("log type names", () => {
  it("resolves canonical names to themselves", () => {
    for (const t of LOG_TYPES) expect(resolveLogType(t)).toBe(t);
  });

  it.each([
    ["condition_updated", "condition"], ["symptom_reported", "symptom_report"], ["mood_reported", "mood_report"],
    ["lab_results_received", "lab_results"], ["vitals_received", "vitals_measurement"],
    ["medication_adherence_reported", "medication_adherence"], ["cgm_received", "cgm_reading"],
    ["heart_rate_data_received", "heart_rate_data"], ["clinical_note_received", "clinical_note"],
  ])("resolves the legacy name %s to %s", (alias, canonical) => {
    expect(resolveLogType(alias)).toBe(canonical);
  });

  it("returns undefined for unknown names, near-misses and inherited object keys", () => {
    for (const name of ["nope", "Symptom_Report", "symptom_report ", "toString", "__proto__", ""]) {
      expect(resolveLogType(name)).toBeUndefined();
    }
  });

  it("refuses to validate against a name that is not a canonical log type", () => {
    expect(() => validatePayload("toString" as LogType, {})).toThrow(/unknown log type toString/);
    expect(() => validatePayload("symptom_reported" as LogType, {})).toThrow(/resolveLogType/);
  });

  it("keeps aliases distinct from canonical names and lists them on their type", () => {
    for (const [alias, type] of Object.entries(LOG_TYPE_ALIASES)) {
      expect(LOG_TYPES).not.toContain(alias);
      expect(logTypeInfo(type).aliases).toContain(alias);
    }
    expect(logTypeInfo("condition").aliases).toEqual(["condition_updated", "condition_recorded"]);
  });

  it("documents every type and every alias in docs/log-types.md", () => {
    const doc = readFileSync(new URL("../../docs/log-types.md", import.meta.url), "utf8");
    for (const name of [...LOG_TYPES, ...Object.keys(LOG_TYPE_ALIASES)]) expect(doc).toContain(`\`${name}\``);
  });
});
