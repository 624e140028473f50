import { describe, expect, it } from "vitest";
import { validatePayload, type LogType } from "../../catalog/index.js";

const T = "2024-05-01T08:00:00Z";
const issues = (type: LogType, payload: unknown) => validatePayload(type, payload).map(({ path, message }) => ({ path, message }));
const one = (path: (string | number)[], message: string) => [{ path, message }];

const symptoms = (instrument: string, ...entries: Record<string, unknown>[]) => ({ instrument, symptoms: entries });

describe("symptom group rules", () => {
  it.each([
    ["esas_r", 11, "0-10"], ["pro_ctcae", 7, "0-4"], ["ctcae", 6, "0-5"], ["custom", 10.5, "0-10"],
  ])("refuses a %s score of %s as outside %s", (instrument, score, range) => {
    expect(issues("symptom_report", symptoms(instrument, { name: "pain", score }))).toEqual(
      one(["symptoms", 0, "score"], `score ${score} is outside ${range} for instrument ${instrument}`),
    );
  });

  it("accepts scores at both ends of the instrument's range", () => {
    expect(issues("symptom_report", symptoms("ctcae", { name: "rash", score: 0 }, { name: "fatigue", score: 5 }))).toEqual([]);
  });

  it("points at the missing score of a symptom", () => {
    expect(issues("symptom_report", symptoms("esas_r", { name: "pain" }))).toEqual(one(["symptoms", 0, "score"], "is required"));
  });

  it("requires an esas_r symptom name from the ESAS-r list", () => {
    expect(issues("symptom_report", symptoms("esas_r", { name: "pain", score: 1 }, { name: "fever", score: 2 }))).toEqual(
      one(["symptoms", 1, "name"], expect.stringMatching(/^must be one of pain, tiredness, .* for instrument esas_r$/) as never),
    );
  });

  it("requires scale_min and scale_max for a clinic-defined instrument and keeps its score within them", () => {
    expect(issues("symptom_report", symptoms("mdasi", { name: "pain", score: 3, scale_max: 10 }))[0]).toEqual({
      path: ["symptoms", 0, "scale_min"],
      message: "is required for clinic-defined instrument mdasi (known instruments: esas_r, pro_ctcae, ctcae, custom)",
    });
    expect(issues("symptom_report", symptoms("mdasi", { name: "pain", score: 12, scale_min: 1, scale_max: 10 }))).toEqual(
      one(["symptoms", 0, "score"], "score 12 is outside 1-10 for instrument mdasi"),
    );
    expect(issues("symptom_report", symptoms("mdasi", { name: "pain", score: 3, scale_min: 5, scale_max: 5 }))).toEqual(
      one(["symptoms", 0, "scale_max"], "scale_max 5 must be greater than scale_min 5"),
    );
  });

  it("lets a score of 0 resolve a symptom even on a clinic scale starting above 0", () => {
    expect(issues("symptom_report", symptoms("mdasi", { name: "pain", score: 0, scale_min: 1, scale_max: 10 }))).toEqual([]);
  });

  it("refuses a scale for a known instrument that differs from the instrument's own", () => {
    expect(issues("symptom_report", symptoms("esas_r", { name: "pain", score: 2, scale_min: 0, scale_max: 5 }))).toEqual(
      one(["symptoms", 0, "scale_max"], "scale_max 5 does not match 10 for instrument esas_r; omit it"),
    );
    expect(issues("symptom_report", symptoms("esas_r", { name: "pain", score: 2, scale_min: 0, scale_max: 10 }))).toEqual([]);
  });

  it("keeps PRO-CTCAE axes and recall windows to their instrument", () => {
    expect(issues("symptom_report", symptoms("esas_r", { name: "pain", score: 2, frequency: 1 }))).toEqual(
      one(["symptoms", 0, "frequency"], "is a PRO-CTCAE axis; omit it for instrument esas_r"),
    );
    expect(issues("symptom_report", { ...symptoms("pro_ctcae", { name: "pain", score: 2 }), recall_period_days: 3 })).toEqual(
      one(["recall_period_days"], "must be 7 for instrument pro_ctcae, whose recall window is fixed"),
    );
  });

  it("bounds mood intensity to 0-10 while allowing null", () => {
    expect(issues("mood_report", { moods: [{ mood: "sad", intensity: 11 }] })).toEqual(one(["moods", 0, "intensity"], "must be between 0 and 10"));
    expect(issues("mood_report", { moods: [{ mood: "sad", intensity: "high" }] })).toEqual(one(["moods", 0, "intensity"], "must be a number or null"));
  });

  it("checks a functional class against the 0-100 bound and its instrument's range", () => {
    expect(issues("functional_class", { instrument: "karnofsky", class: 110 })).toEqual(one(["class"], "must be between 0 and 100"));
    expect(issues("functional_class", { instrument: "NYHA", class: 0 })).toEqual(one(["class"], "class 0 is outside 1-4 for instrument NYHA"));
    expect(issues("functional_class", { instrument: "adl", class: 6 })).toEqual([]);
  });

  it("keeps a health metric score within its explicit scale", () => {
    const metric = { metric_type: "wellbeing", scale_min: 0, scale_max: 10 };
    expect(issues("health_metric", { ...metric, score: 11 })).toEqual(one(["score"], "score 11 is outside 0-10 for metric wellbeing"));
    expect(issues("health_metric", { ...metric, score: 3, scale_min: 10 })).toEqual(one(["scale_max"], "scale_max 10 must be greater than scale_min 10"));
    expect(issues("health_metric", { metric_type: "energy", score: 3 })).toEqual(one(["scale_min"], "is required").concat(one(["scale_max"], "is required")));
  });
});

describe("lab and clinical group rules", () => {
  const lab = (result: Record<string, unknown>) => ({ results: [result] });

  it("tells a null required field, and a null list item, to send a value rather than to leave it out", () => {
    expect(issues("symptom_report", { instrument: "esas_r", symptoms: null })).toEqual(one(["symptoms"], "must be an array; it is required, so send its value (null is not one)"));
    expect(issues("symptom_report", { instrument: "esas_r", symptoms: [null] })).toEqual(one(["symptoms", 0], "must be an object; a list holds no null items: leave the item out of the list"));
  });

  it("requires test_name only when loinc_code is absent", () => {
    expect(issues("lab_results", lab({ value_numeric: 5, unit: "g/dL" }))).toEqual(one(["results", 0, "test_name"], "is required when loinc_code is absent"));
    expect(issues("lab_results", lab({ loinc_code: "718-7", value_numeric: 5, unit: "g/dL" }))).toEqual([]);
  });

  it("refuses a null reference range bound and asks for it to be omitted", () => {
    expect(issues("lab_results", lab({ loinc_code: "718-7", unit: "g/dL", reference_range_high: null }))).toEqual(
      one(["results", 0, "reference_range_high"], "must be a number; omit the field when the value is unknown instead of sending null"),
    );
    expect(issues("lab_results", lab({ loinc_code: "718-7", unit: "g/dL", reference_range_low: 14, reference_range_high: 12 }))).toEqual(
      one(["results", 0, "reference_range_high"], "reference_range_high 12 is below reference_range_low 14"),
    );
  });

  it("requires a unit on every result and a known test category", () => {
    expect(issues("lab_results", lab({ loinc_code: "718-7", test_category: "blood" }))).toEqual([
      { path: ["results", 0, "unit"], message: "is required" },
      { path: ["results", 0, "test_category"], message: "must be one of hematology, metabolic, lipid, oncology_marker, cardiac, diabetes, renal, hepatic, other" },
    ]);
  });

  it("runs refinements only once the schema passes", () => {
    expect(issues("lab_results", lab({ value_numeric: 5 }))).toEqual(one(["results", 0, "unit"], "is required"));
  });

  it("bounds spo2 in vitals, requires the vitals envelope fields and at least one measurement", () => {
    const vitals = { measurements: { spo2_percent: 96 }, context: {}, source: "device", collection_datetime: null };
    expect(issues("vitals_measurement", vitals)).toEqual([]);
    expect(issues("vitals_measurement", { ...vitals, measurements: { spo2_percent: 101 } })).toEqual(
      one(["measurements", "spo2_percent"], "must be between 0 and 100"),
    );
    expect(issues("vitals_measurement", { measurements: { heart_rate_bpm: 70 }, context: {} })).toEqual([
      { path: ["source"], message: "is required" }, { path: ["collection_datetime"], message: "is required" },
    ]);
    expect(issues("vitals_measurement", { ...vitals, measurements: { weight_kg: null } })).toEqual(
      one(["measurements"], "must hold at least one measurement with a number"),
    );
  });

  it.each(["systolic_bp_mmhg", "diastolic_bp_mmhg", "heart_rate_bpm", "weight_kg", "temperature_celsius", "respiratory_rate_bpm"])(
    "refuses a negative vitals %s, as weight_measurement refuses a negative weight",
    (field) => {
      const vitals = { measurements: { [field]: -5 }, context: {}, source: "device", collection_datetime: null };
      expect(issues("vitals_measurement", vitals)).toEqual(one(["measurements", field], "must be at least 0"));
      expect(issues("vitals_measurement", { ...vitals, measurements: { [field]: 0 } })).toEqual([]);
    },
  );

  it("checks the note type and the date formats of clinical notes", () => {
    const note = { note_type: "soap", source: "ehr", sections: [{ section_label: "A", content: "B" }], authored_date: "05/01/2024" };
    expect(issues("clinical_note", note)).toEqual([
      { path: ["note_type"], message: expect.stringMatching(/^must be one of progress_note, history_and_physical, .*, other$/) },
      { path: ["authored_date"], message: "must be an ISO 8601 date (YYYY-MM-DD)" },
    ]);
  });

  it("checks the status and period of a designed care_encounter", () => {
    expect(issues("care_encounter", { encounter_id: "e", status: "done" })).toEqual(
      one(["status"], "must be one of planned, arrived, in_progress, finished, cancelled, entered_in_error"),
    );
    const period = { start_datetime: "2024-05-02T10:00:00Z", end_datetime: "2024-05-02T09:00:00Z" };
    expect(issues("care_encounter", { encounter_id: "e", status: "finished", period })).toEqual(
      one(["period", "end_datetime"], "end_datetime 2024-05-02T09:00:00Z is before start_datetime 2024-05-02T10:00:00Z"),
    );
  });
});

describe("engagement group rules", () => {
  it("refuses an action outside the type's list", () => {
    expect(issues("content_interaction", { content_type: "card", action: "liked" })).toEqual(
      one(["action"], "must be one of viewed, bookmarked, dismissed, completed, shared, clicked"),
    );
  });

  it("requires the type's label fields and refuses negative durations", () => {
    expect(issues("task_outcome", { action: "skipped", completion_time_seconds: -4 })).toEqual([
      { path: ["task_type"], message: "is required" }, { path: ["completion_time_seconds"], message: "must be at least 0" },
    ]);
    expect(issues("feature_usage", { feature_name: "" })).toEqual(one(["feature_name"], "must not be empty"));
  });
});

describe("passive group rules", () => {
  it("bounds percentages to 0-100", () => {
    expect(issues("spo2_reading", { spo2_percent: 101 })).toEqual(one(["spo2_percent"], "must be between 0 and 100"));
    expect(issues("weight_measurement", { weight_kg: 70, body_fat_percent: -1 })).toEqual(one(["body_fat_percent"], "must be between 0 and 100"));
    expect(issues("activity_data", { time_at_home_percent: 100.5 })).toEqual(one(["time_at_home_percent"], "must be between 0 and 100"));
  });

  it("requires ISO 8601 UTC sensor timestamps and ordered periods", () => {
    expect(issues("cgm_reading", { glucose_mg_dl: 100, sensor_timestamp: "2024-05-01 08:00" })).toEqual(
      one(["sensor_timestamp"], "must be an ISO 8601 datetime with Z or a UTC offset (YYYY-MM-DDThh:mm[:ss[.fff]]Z)"),
    );
    const period = { start_datetime: T, end_datetime: "2024-04-30T08:00:00Z" };
    expect(issues("sleep_data", { period })).toEqual(one(["period", "end_datetime"], `end_datetime 2024-04-30T08:00:00Z is before start_datetime ${T}`));
    expect(issues("heart_rate_data", { min_bpm: 90, max_bpm: 80 })).toEqual(one(["min_bpm"], "min_bpm 90 is above max_bpm 80"));
  });
});

describe("profile group rules", () => {
  it("checks the phase enum and the effective date of a treatment phase", () => {
    expect(issues("treatment_phase", { new_phase: "hospice", effective_date: "2024-13-01", changed_by: "clinician" })).toEqual([
      { path: ["new_phase"], message: "must be one of active_treatment, surveillance, palliative, remission" },
      { path: ["effective_date"], message: "must be an ISO 8601 date (YYYY-MM-DD)" },
    ]);
  });

  it("needs a name to remove an emergency contact", () => {
    expect(issues("emergency_contact", { action: "remove", phone: "+1555" })).toEqual(
      one(["name"], "is required to remove an emergency contact (contacts are matched by name)"),
    );
    expect(issues("emergency_contact", { action: "remove", name: "Luis" })).toEqual([]);
    expect(issues("emergency_contact", { phone: "+1555" })).toEqual([]);
  });

  it("needs every condition to be named by disease_type, snomed_code or icd10_codes", () => {
    expect(issues("condition", { clinical_status: "active" })).toEqual(
      one(["disease_type"], "is required when neither snomed_code nor icd10_codes names the condition (and no conditions are listed)"),
    );
    expect(issues("condition", { conditions: [{ icd10_codes: ["E11.9"] }, { stage: "II" }] })).toEqual(
      one(["conditions", 1, "disease_type"], "is required when neither snomed_code nor icd10_codes names the condition"),
    );
    expect(issues("condition", { snomed_code: "44054006" })).toEqual([]);
  });

  it("checks language tags and allergy entries", () => {
    expect(issues("demographics", { language: "English" })).toEqual(one(["language"], "must be a BCP 47 language tag (for example en, en-US, es-419)"));
    expect(issues("allergy_intolerance", { allergies: [{ allergen: "nuts", criticality: "severe" }] })).toEqual(
      one(["allergies", 0, "criticality"], "must be one of high, low, unable_to_assess"),
    );
  });
});

describe("medication group rules", () => {
  it("needs only an identifier to delete, and a name or code to add or update", () => {
    expect(issues("medication_list_update", { medications: [{ action: "delete", medication_name: "Metformin" }] })).toEqual([]);
    expect(issues("medication_list_update", { medications: [{ action: "delete" }] })).toEqual(
      one(["medications", 0, "medication_name"], "is required when rxnorm_cui is absent: delete needs an identifier (rxnorm_cui or medication_name)"),
    );
    expect(issues("medication_list_update", { medications: [{ action: "add", dose: "5 mg" }] })).toEqual(
      one(["medications", 0, "medication_name"], "is required when rxnorm_cui is absent: add needs medication_name or rxnorm_cui"),
    );
    expect(issues("medication_list_update", { medications: [{ action: "add", rxnorm_cui: "860975" }] })).toEqual([]);
  });

  it("checks schedule times, actions and adherence entries", () => {
    expect(issues("medication_list_update", { medications: [{ action: "stop", medication_name: "X", schedule_times: ["8am"] }] })).toEqual([
      { path: ["medications", 0, "action"], message: "must be one of add, update, delete, remove" },
      { path: ["medications", 0, "schedule_times", 0], message: "must be a 24-hour time of day HH:MM" },
    ]);
    expect(issues("medication_adherence", { medication_adherence: [{ status: "taken" }] })).toEqual(
      one(["medication_adherence", 0, "medication_name"], "is required when rxnorm_cui is absent: a dose must name its medication"),
    );
    expect(issues("medication_adherence", { medication_adherence: [] })).toEqual(one(["medication_adherence"], "must have at least 1 item"));
  });
});

describe("conversation group rules", () => {
  it("checks turn indexes, speaker labels and memory tags", () => {
    expect(issues("conversation_turn", { conversation_id: "c", turn_index: -1, speaker_label: "bot", text: "hi" })).toEqual([
      { path: ["turn_index"], message: "must be at least 0" },
      { path: ["speaker_label"], message: "must be one of patient, agent, clinician" },
    ]);
    expect(issues("memory_report", { content: "x", type: "hobbies" })[0]).toMatchObject({ path: ["type"], message: expect.stringMatching(/^must be one of interests_concerns, /) });
  });

  it("accepts a transcript as a string and checks structured turns inside it", () => {
    expect(issues("conversation", { transcript: "Agent: hi" })).toEqual([]);
    expect(issues("conversation", { transcript: [{ speaker_label: "agent" }] })).toEqual(one(["transcript", 0, "text"], "is required"));
    expect(issues("conversation", { transcript: 3 })).toEqual(one(["transcript"], "must be a string or an array"));
  });
});

describe("questionnaire group rules", () => {
  const response = (over: Record<string, unknown> = {}) => ({
    instrument: { instrument_id: "PHQ-9", instrument_type: "validated" },
    administration: { administration_mode: "patient_self_report" },
    item_responses: [{ item_number: 1, response_value: 2 }],
    scores: { total_score: 2 },
    ...over,
  });

  it("requires administered_by.name unless the patient self-reported", () => {
    expect(issues("questionnaire_response", response())).toEqual([]);
    expect(issues("questionnaire_response", response({ administration: { administration_mode: "caregiver_proxy" } }))).toEqual(
      one(["administration", "administered_by", "name"], "is required when administration_mode is caregiver_proxy"),
    );
    const named = { administration_mode: "caregiver_proxy", administered_by: { name: "Luis" } };
    expect(issues("questionnaire_response", response({ administration: named }))).toEqual([]);
  });

  it("requires item_text on every item of a custom instrument", () => {
    const custom = { instrument_id: "clinic-7", instrument_type: "custom" };
    const items = [{ item_number: 1, item_text: "Sleep?", response_value: 1 }, { item_number: 2, response_value: 0 }];
    expect(issues("questionnaire_response", response({ instrument: custom, item_responses: items }))).toEqual(
      one(["item_responses", 1, "item_text"], "is required on every item of a custom instrument"),
    );
    items[1] = { ...items[1]!, item_text: "Appetite?" };
    expect(issues("questionnaire_response", response({ instrument: custom, item_responses: items }))).toEqual([]);
  });

  it("allows total_score only when every response is numeric", () => {
    const items = [{ item_number: 1, response_value: 2 }, { item_number: 2, response_value: "often" }];
    expect(issues("questionnaire_response", response({ item_responses: items }))).toEqual(
      one(["scores", "total_score"], 'is only allowed when every response_value is numeric (item_responses[1] is "often")'),
    );
    expect(issues("questionnaire_response", response({ item_responses: items, scores: {} }))).toEqual([]);
  });

  it("checks response values and response_scale_max", () => {
    expect(issues("questionnaire_item_response", { question: "Tired?", response_value: true, response_scale_max: 4 })).toEqual(
      one(["response_scale_max"], "is only allowed when response_value is numeric"),
    );
    expect(issues("questionnaire_item_response", { question: "Tired?", response_value: 5, response_scale_max: 4 })).toEqual(
      one(["response_value"], "response_value 5 is above response_scale_max 4"),
    );
    expect(issues("questionnaire_item_response", { question: "Tired?", response_value: { a: 1 } })).toEqual(
      one(["response_value"], "must be a number, a string or a boolean"),
    );
    expect(issues("questionnaire_response", response({ item_responses: [{ item_number: 0 }] }))).toEqual([
      { path: ["item_responses", 0, "response_value"], message: "is required" },
      { path: ["item_responses", 0, "item_number"], message: "must be at least 1" },
    ]);
  });
});
