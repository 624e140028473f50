import type { LogType } from "../catalog/log-types.js";
import type { ModuleKey } from "./module.js";

/**
 * The modules a log type updates. The switch is exhaustive: a log type added to the
 * catalog does not compile until it is routed here (and a test checks that every
 * module's `handles` agrees with this table).
 */
export function routeLog(type: LogType): readonly ModuleKey[] {
  switch (type) {
    case "symptom_report":
    case "symptom_detail":
    case "symptom_free_text":
    case "health_metric": // Patient-reported metrics (wellbeing, energy, pain NRS) sit beside the symptoms they qualify.
      return ["symptoms"];
    case "mood_report":
      return ["emotional_state"];
    case "functional_class":
    case "clinical_note":
    case "clinical_finding":
    case "genomic_variant":
    case "imaging_result":
    case "clinical_measurement":
    case "treatment_response_assessment":
    case "care_encounter":
    case "clinical_plan_item":
    case "unstructured_report":
    case "care_goal":
    case "care_action":
      return ["clinical_context"];
    case "lab_results":
      return ["lab_results"];
    case "vitals_measurement":
    case "weight_measurement":
      return ["vitals"];
    case "procedure_result":
    case "procedure":
      return ["procedures"];
    case "user_login":
    case "user_logout":
    case "content_interaction":
    case "notification_interaction":
    case "task_outcome":
    case "interaction_feedback":
    case "feature_usage":
      return ["engagement"];
    case "heart_rate_data":
    case "spo2_reading":
      return ["heart"];
    case "sleep_data":
      return ["sleep"];
    case "activity_data":
      return ["physical_activity"];
    case "cgm_reading":
      return ["glucose"];
    case "demographics":
      return ["demographics"];
    case "condition":
    case "treatment_phase":
      return ["condition_diagnosis"];
    case "preferences":
      return ["user_preferences"];
    case "emergency_contact":
      return ["emergency_contact"];
    case "care_team":
      return ["care_team"];
    case "insurance":
      return ["insurance"];
    case "social_determinants":
      return ["social"];
    case "pharmacy":
      return ["pharmacy"];
    case "allergy_intolerance":
      return ["allergies"];
    case "immunization":
      return ["immunizations"];
    case "family_history":
      return ["family_history"];
    case "device":
      return ["devices"];
    // Adherence lays its dose schedule out again at every list change (see adherence's scheduleOf), on the list this log made: medications first.
    case "medication_list_update":
      return ["medications", "adherence"];
    // Dose events and adverse events are events about a medication, not changes to the list.
    case "medication_adherence":
    case "medication_adverse_event":
      return ["adherence"];
    case "conversation":
    case "conversation_turn":
    case "memory_report":
      return ["conversations"];
    case "questionnaire_response":
    case "questionnaire_item_response":
      return ["questionnaires"];
    default: {
      // Compile-time exhaustiveness. At run time a stored type this build does not know
      // (a newer writer) changes nothing, rather than stopping the patient's replay.
      const unrouted: never = type;
      void unrouted;
      return [];
    }
  }
}
