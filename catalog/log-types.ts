/**
 * The 55 canonical log types of the catalog, by group. This list is the single source
 * of truth: the schemas, the reducers' exhaustive switches and the published catalog
 * all derive from it.
 */
export const LOG_GROUPS = {
  symptom: ["symptom_report", "mood_report", "symptom_free_text", "symptom_detail", "functional_class", "health_metric"],
  lab_clinical: [
    "lab_results", "vitals_measurement", "clinical_note", "clinical_finding", "procedure_result",
    "genomic_variant", "imaging_result", "clinical_measurement", "treatment_response_assessment",
    // Named but not shaped by the spec: schemas are this service's design.
    "care_encounter", "clinical_plan_item", "unstructured_report", "procedure", "care_goal", "care_action",
  ],
  engagement: [
    "user_login", "user_logout", "content_interaction", "notification_interaction", "task_outcome",
    "interaction_feedback", "feature_usage",
  ],
  passive: ["heart_rate_data", "sleep_data", "activity_data", "cgm_reading", "spo2_reading", "weight_measurement"],
  profile: [
    "demographics", "condition", "preferences", "emergency_contact", "care_team", "insurance",
    "social_determinants", "pharmacy", "treatment_phase", "allergy_intolerance",
    // Named but not shaped by the spec: schemas are this service's design.
    "immunization", "family_history", "device",
  ],
  medication: ["medication_adherence", "medication_list_update", "medication_adverse_event"],
  conversation: ["conversation", "conversation_turn", "memory_report"],
  questionnaire: ["questionnaire_response", "questionnaire_item_response"],
} as const;

export type LogGroup = keyof typeof LOG_GROUPS;
export type LogType = (typeof LOG_GROUPS)[LogGroup][number];

export const LOG_TYPES: readonly LogType[] = Object.values<readonly LogType[]>(LOG_GROUPS).flat();

export const GROUP_OF: Readonly<Record<LogType, LogGroup>> = Object.fromEntries(
  (Object.entries(LOG_GROUPS) as [LogGroup, readonly LogType[]][]).flatMap(([g, types]) => types.map((t) => [t, g])),
) as Record<LogType, LogGroup>;

/** Lifecycle-tracked types keep each entity with status and history; the rest are point-in-time. */
export const LIFECYCLE_TRACKED: ReadonlySet<LogType> = new Set<LogType>([
  "symptom_report", "mood_report", "condition", "treatment_phase", "allergy_intolerance",
]);

export function isLogType(name: string): name is LogType {
  // Own keys only: inherited names such as "toString" or "constructor" are not log types.
  return Object.hasOwn(GROUP_OF, name);
}
