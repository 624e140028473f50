/**
 * The keys of the compiled state's modules, as clients name them (the contract's module
 * keys: `?modules=`, `/event-modules/{module_type}`, MCP's `modules`). Published here so
 * that clients know them; readmodels/ holds what each one is.
 */

/** Stable modules: slow-changing facts (GET /v1/state/{pid}/stable). */
export const STABLE_MODULES = [
  "demographics", "condition_diagnosis", "medications", "user_preferences", "emergency_contact", "care_team",
  "insurance", "social", "pharmacy", "procedures", "allergies", "immunizations", "devices", "family_history",
] as const;

/** Event-state modules: rolling regions (GET /v1/state/{pid}/event-modules/{module_type}). */
export const EVENT_MODULES = [
  "symptoms", "emotional_state", "adherence", "physical_activity", "engagement", "heart", "sleep", "lab_results",
  "vitals", "clinical_context", "questionnaires", "conversations", "glucose",
] as const;

export type StableKey = (typeof STABLE_MODULES)[number];
export type EventKey = (typeof EVENT_MODULES)[number];
export type ModuleKey = StableKey | EventKey;
