import type { Aliased, Lifecycle } from "../../lib/lifecycle.js";
import type { SourceRef } from "../../lib/lists.js";
import type { Obj } from "../../lib/payload.js";

export interface SymptomReport {
  timestamp: string;
  score: number;
  instrument: string;
  log_id: string;
}

export interface SymptomDetail {
  timestamp: string;
  log_id: string;
  /** location, duration, character, trigger, alleviating_factor, ... (client-extensible) */
  detail_type: string;
  question: string | null;
  response: string;
}

/**
 * One tracked symptom. Identity: snomed_code, else meddra_code, else normalized name, the
 * name matching any of `aliases` too (the names it was reported under).
 */
export interface Symptom extends Lifecycle<SymptomReport>, Aliased {
  name: string;
  snomed_code: string | null;
  meddra_code: string | null;
  /** "resolved" when the latest report (by event time) scored 0; a later non-zero score reopens. */
  status: "active" | "resolved";
  /** Score of the latest report, on its instrument's scale. */
  current_score: number;
  instrument: string;
  type: string | null;
  scale_min: number | null;
  scale_max: number | null;
  /** Latest PRO-CTCAE axes and adverse-event annotations (frequency, interference, seriousness, ...). */
  attributes: Obj;
  /** Follow-up details from symptom_detail, the last 20 by event time. */
  details: SymptomDetail[];
}

/** A symptom_detail that matched no symptom yet; adopted when that symptom is first reported. */
export interface PendingDetail extends SymptomDetail {
  symptom_type: string;
  snomed_code: string | null;
  meddra_code: string | null;
  source: unknown;
}

export interface FreeTextReport {
  timestamp: string;
  log_id: string;
  text: string;
  associated_symptoms: { name: string; snomed_code: string | null; meddra_code: string | null }[];
  /** The payload's source, as sent (null when none). */
  source: unknown;
}

export interface MetricReading {
  timestamp: string;
  log_id: string;
  score: number;
  scale_min: number | null;
  scale_max: number | null;
}

/** A health_metric series, one per normalized metric_type. */
export interface HealthMetric {
  metric_type: string;
  latest: MetricReading;
  history: MetricReading[];
  /** Extensions of its logs, merged at leaf level (latest event time wins per leaf). */
  extensions: Obj;
  /** The last 10 logs that reported it. */
  sources: SourceRef[];
}

export interface SymptomsDoc {
  symptoms: Symptom[];
  pending_details: PendingDetail[];
  /** symptom_free_text reports, the last 20. */
  free_text: FreeTextReport[];
  health_metrics: HealthMetric[];
}
