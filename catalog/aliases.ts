import type { LogType } from "./log-types.js";

/**
 * Legacy log type names older clients send, mapped to the canonical type. Only exact
 * names resolve: guessing at near-misses would file data under the wrong type.
 * condition_updated is named by the spec; the rest follow the older past-tense event
 * naming (`*_reported` for patient-reported facts, `*_received` for feeds from devices,
 * labs and clinical systems), in the full form and the short form a client would use.
 */
export const LOG_TYPE_ALIASES: Readonly<Record<string, LogType>> = Object.freeze({
  condition_updated: "condition",

  symptom_reported: "symptom_report",
  mood_reported: "mood_report",
  symptom_free_text_reported: "symptom_free_text",
  symptom_detail_reported: "symptom_detail",
  functional_class_reported: "functional_class",
  health_metric_reported: "health_metric",
  medication_adherence_reported: "medication_adherence",
  medication_adverse_event_reported: "medication_adverse_event",

  lab_results_received: "lab_results",
  lab_result_received: "lab_results",
  vitals_received: "vitals_measurement",
  vitals_measurement_received: "vitals_measurement",
  clinical_note_received: "clinical_note",
  clinical_finding_received: "clinical_finding",
  procedure_result_received: "procedure_result",
  genomic_variant_received: "genomic_variant",
  imaging_result_received: "imaging_result",
  clinical_measurement_received: "clinical_measurement",

  heart_rate_data_received: "heart_rate_data",
  heart_rate_received: "heart_rate_data",
  sleep_data_received: "sleep_data",
  sleep_received: "sleep_data",
  activity_data_received: "activity_data",
  activity_received: "activity_data",
  cgm_reading_received: "cgm_reading",
  cgm_received: "cgm_reading",
  spo2_reading_received: "spo2_reading",
  spo2_received: "spo2_reading",
  weight_measurement_received: "weight_measurement",
  weight_received: "weight_measurement",

  // The hosted product's SDK enum (olira 1.11) still offers these older names, and its
  // service accepts them indefinitely: integrators' code sends them.
  moods_report: "mood_report",
  clinical_finding_reported: "clinical_finding",
  procedure_performed: "procedure",
  genomic_variant_reported: "genomic_variant",
  clinical_measurement_reported: "clinical_measurement",
  treatment_response_assessment_reported: "treatment_response_assessment",
  clinical_plan_item_reported: "clinical_plan_item",
  care_encounter_reported: "care_encounter",
  care_goal_reported: "care_goal",
  immunization_reported: "immunization",
  allergy_intolerance_reported: "allergy_intolerance",
  family_history_reported: "family_history",
  device_reported: "device",
  care_action_logged: "care_action",
  unstructured_report_received: "unstructured_report",
  conversation_completed: "conversation",
  conversation_turn_logged: "conversation_turn",
  medication_action: "medication_list_update",
  medication_dose_update: "medication_adherence",
  content_interacted: "content_interaction",
  notification_interacted: "notification_interaction",
  task_updated: "task_outcome",
  feature_used: "feature_usage",
  demographics_updated: "demographics",
  condition_recorded: "condition",
  preferences_updated: "preferences",
  emergency_contact_updated: "emergency_contact",
  care_team_updated: "care_team",
  insurance_updated: "insurance",
  social_updated: "social_determinants",
  pharmacy_updated: "pharmacy",
  treatment_phase_changed: "treatment_phase",
});
