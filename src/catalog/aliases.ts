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
});
