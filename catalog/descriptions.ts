import type { LogType } from "./log-types.js";

/**
 * What each log type records, in one sentence, for people and models choosing a type
 * (GET /v1/log-types). A Record over every type: a type added to the catalog does not
 * compile until it is described here.
 */
export const LOG_TYPE_DESCRIPTIONS: Readonly<Record<LogType, string>> = Object.freeze({
  symptom_report: "Scored symptom severity on a defined instrument (ESAS-r, PRO-CTCAE, CTCAE or a clinic-defined one); a score of 0 resolves the symptom.",
  mood_report: "Categorical moods the patient reports, each with an optional 0-10 intensity.",
  symptom_free_text: "A symptom described in the patient's own words, with the symptoms it names if known.",
  symptom_detail: "A follow-up detail (location, duration, trigger, ...) on a symptom already reported.",
  functional_class: "A functional status class on an instrument such as NYHA, CCS, ECOG or Karnofsky.",
  health_metric: "A patient-reported metric (wellbeing, energy, pain NRS, ...) on an explicit scale.",
  lab_results: "Laboratory results, one entry per test (LOINC code or test name), each with its value, unit, flag and reference range.",
  vitals_measurement: "A set of vital signs taken together: blood pressure, heart rate, SpO2, weight, temperature, respiratory rate.",
  clinical_note: "A clinical document (progress note, discharge summary, ...) as labelled sections of text.",
  clinical_finding: "Findings a clinician recorded, each a description with body site and severity, or noted as absent.",
  procedure_result: "Results of a pathology or procedure, one entry per result.",
  genomic_variant: "Genomic variants found, by gene, with their classification and actionability.",
  imaging_result: "Findings of an imaging study (CT, MRI, PET, ...) with their impression.",
  clinical_measurement: "Non-laboratory clinical values (ejection fraction, tumour size, QTc, BMI at a visit).",
  treatment_response_assessment: "An assessment of the response to a treatment (CR, PR, SD, PD) by a stated method such as RECIST 1.1.",
  care_encounter: "A visit or other encounter with the care team: its class, period, reason, location and practitioner.",
  clinical_plan_item: "One activity of the care plan (medication, procedure, lab, referral, appointment, ...), with its scheduled date and status.",
  unstructured_report: "A clinical document kept as text when no structured type fits.",
  procedure: "A procedure performed on the patient, with its code, date and status.",
  care_goal: "A goal of care, with its target, due date and lifecycle status.",
  care_action: "A task the care team did or requested for the patient, with its status and outcome.",
  user_login: "The patient signed in to an app.",
  user_logout: "The patient signed out of an app.",
  content_interaction: "The patient viewed, saved, dismissed or completed a piece of content.",
  notification_interaction: "The patient opened, dismissed or snoozed a notification.",
  task_outcome: "The outcome of a task given to the patient (completed, skipped, ...).",
  interaction_feedback: "Feedback the patient gave on something the app showed or said.",
  feature_usage: "The patient used a feature of an app.",
  heart_rate_data: "Heart rate readings from a device over a period, with summary values.",
  sleep_data: "A night's sleep from a device: duration, stages and efficiency.",
  activity_data: "Physical activity from a device over a period: steps, distance, active minutes, calories.",
  cgm_reading: "Continuous glucose monitor readings.",
  spo2_reading: "Blood oxygen saturation readings from a device.",
  weight_measurement: "A body weight measurement from a scale or device.",
  demographics: "The patient's demographic facts, merged field by field (latest wins).",
  condition: "A diagnosis or condition with its status, stage and dates; tracked over its lifecycle.",
  preferences: "The patient's preferences (language, contact, notifications, ...), merged field by field.",
  emergency_contact: "Add, update or remove an emergency contact.",
  care_team: "Add, update or remove a member of the patient's care team.",
  insurance: "Add, update or remove an insurance coverage, by rank.",
  social_determinants: "Social determinants of health (living situation, work, transport, ...), merged field by field.",
  pharmacy: "Add, update or remove a pharmacy the patient uses.",
  treatment_phase: "The phase of a treatment (started, cycle, paused, completed); tracked over its lifecycle.",
  allergy_intolerance: "An allergy or intolerance with its reactions and status; tracked over its lifecycle.",
  immunization: "A vaccine given (or not given), with its date and dose.",
  family_history: "A condition in a family member.",
  device: "A medical device the patient uses or has implanted.",
  medication_adherence: "Whether doses of a medication were taken or skipped, against their scheduled times.",
  medication_list_update: "Add, update or remove a medication on the patient's list, with dose and schedule.",
  medication_adverse_event: "A side effect attributed to a medication, with its severity and action taken.",
  conversation: "A whole conversation with the patient (a chat or call), sent once it ends, with its transcript.",
  conversation_turn: "One turn of a conversation with the patient.",
  memory_report: "A fact worth remembering about the patient, stated in a sentence.",
  questionnaire_response: "A completed questionnaire (PHQ-9, GAD-7, ...) with its score.",
  questionnaire_item_response: "The answer to one item of a questionnaire.",
});

const WORDS: Readonly<Record<string, string>> = { spo2: "SpO2", cgm: "CGM" };

/** "spo2_reading" → "SpO2 reading". */
export function displayName(type: LogType): string {
  const words = type.split("_").map((w) => WORDS[w] ?? w);
  const first = words[0]!;
  words[0] = WORDS[first] ? first : first.charAt(0).toUpperCase() + first.slice(1);
  return words.join(" ");
}
