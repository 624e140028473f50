import type { Segment, View, ViewBlock, ViewType } from "./types.js";

/** A block a template can show, whether or not a patient's state gives it anything to say. */
export interface TemplateBlock {
  id: string;
  name: string;
  segment: Segment;
}

const b = (id: string, name: string, segment: Segment): TemplateBlock => ({ id, name, segment });

/**
 * Every block of each template, in the order a view lists them (its week and long-term
 * blocks, then its temp blocks). A rendered view leaves out the blocks with nothing to
 * say; this list is what `has_result: false` and an empty block answer are made from.
 * test/unit/views/template-blocks.test.ts checks it against what the templates render.
 */
export const TEMPLATE_BLOCKS: Record<ViewType, readonly TemplateBlock[]> = {
  symptom_snapshot: [
    b("active_symptoms", "Active symptoms", "long_term"),
    b("week_changes", "Symptom changes (last 7 days)", "week"),
    b("resolved_symptoms", "Resolved symptoms", "long_term"),
    b("mood", "Mood (last 7 days)", "week"),
    b("health_metrics", "Health metrics (last 7 days)", "week"),
    b("patient_notes", "Patient's own words (last 7 days)", "week"),
    b("symptoms_to_follow_up", "Symptoms to follow up", "temp"),
  ],
  medication_snapshot: [
    b("current_medications", "Current medications", "long_term"),
    b("adherence_week", "Adherence (last 7 days)", "week"),
    b("recent_adverse_events", "Adverse events (last 7 days)", "week"),
    b("adverse_events", "Earlier adverse events", "long_term"),
    b("missed_doses", "Missed doses (last 7 days)", "temp"),
  ],
  labs_snapshot: [
    b("latest_results", "Latest results", "long_term"),
    b("abnormal_results", "Abnormal results (critical first)", "long_term"),
    b("week_results", "Results in the last 7 days", "week"),
    b("critical_values", "Critical values", "temp"),
  ],
  vitals_snapshot: [
    b("latest_vitals", "Latest vitals", "long_term"),
    b("week_summary", "Vitals in the last 7 days", "week"),
    b("weight_trend", "Weight trend (last 7 days)", "week"),
  ],
  profile_snapshot: [
    b("demographics", "Demographics", "long_term"),
    b("conditions", "Conditions and treatment phase", "long_term"),
    b("allergies", "Allergies", "long_term"),
    b("care_team", "Care team", "long_term"),
    b("emergency_contacts", "Emergency contacts", "long_term"),
    b("insurance", "Insurance", "long_term"),
    b("pharmacy", "Pharmacy", "long_term"),
    b("preferences", "Preferences", "long_term"),
    b("social_determinants", "Social determinants", "long_term"),
    b("immunizations", "Immunizations", "long_term"),
    b("family_history", "Family history", "long_term"),
    b("devices", "Devices", "long_term"),
    b("missing_essentials", "Missing essentials to ask", "temp"),
  ],
  engagement_snapshot: [
    b("activity_week", "App activity (last 7 days)", "week"),
    b("feature_usage", "Feature usage (last 7 days)", "week"),
    b("conversations", "Recent conversations", "long_term"),
    b("memories", "Memories", "long_term"),
  ],
  questionnaire_snapshot: [
    b("latest_scores", "Latest scores", "long_term"),
    b("week_administrations", "Administrations in the last 7 days", "week"),
    b("significant_results", "Significant or worsening results", "temp"),
  ],
  device_snapshot: [
    b("heart_week", "Heart (last 7 days)", "week"),
    b("sleep_week", "Sleep (last 7 days)", "week"),
    b("activity_week", "Physical activity (last 7 days)", "week"),
    b("glucose_week", "Glucose (last 7 days)", "week"),
    b("glucose_14_days", "Glucose (last 14 days, consensus metrics)", "long_term"),
    b("latest_readings", "Latest readings", "long_term"),
    b("out_of_range", "Out-of-range readings (last 7 days)", "temp"),
  ],
};

/** Whether a block has something to say (the block answers' `has_result`). */
export const hasResult = (b: ViewBlock | undefined): boolean => b !== undefined && b.text.trim() !== "";

/** Every block of the view's template, with whether this rendering has something in it. */
export function blockListing(v: View): { block_id: string; block_name: string; segment: Segment; has_result: boolean }[] {
  const rendered = new Map([...v.blocks, ...v.temp].map((x) => [x.id, x]));
  return TEMPLATE_BLOCKS[v.view_type].map((t) => ({ block_id: t.id, block_name: t.name, segment: t.segment, has_result: hasResult(rendered.get(t.id)) }));
}

/**
 * One block of a view: the rendered one, or an empty one when the template has it but
 * the state gives it nothing to say (no text, no refs, data null); undefined when the
 * template has no such block.
 */
export function viewBlock(v: View, blockId: string): ViewBlock | undefined {
  const rendered = [...v.blocks, ...v.temp].find((x) => x.id === blockId);
  if (rendered) return rendered;
  const t = TEMPLATE_BLOCKS[v.view_type].find((x) => x.id === blockId);
  return t && { id: t.id, name: t.name, segment: t.segment, text: "", refs: [], data: null };
}
