import type { ModuleKey } from "../module.js";
import type { PatientState } from "../patient-state.js";

/** The view keys (`view_type`): one template each, rendered from the patient's compiled modules. */
export const VIEW_TYPES = [
  "symptom_snapshot", "medication_snapshot", "labs_snapshot", "vitals_snapshot", "profile_snapshot",
  "engagement_snapshot", "questionnaire_snapshot", "device_snapshot",
] as const;

export type ViewType = (typeof VIEW_TYPES)[number];

/** `week`: about the 7 days before the as-of time; `long_term`: standing facts; `temp`: things to follow up or ask. */
export type Segment = "week" | "long_term" | "temp";

export interface ViewBlock {
  /** Stable snake_case id, unique within its view type. */
  id: string;
  name: string;
  /** Markdown: a bullet list, dates YYYY-MM-DD in the patient's timezone. */
  text: string;
  segment: Segment;
  /** Ids of the logs the block's facts came from, sorted, unique. */
  refs: string[];
  /** The same facts as structured JSON (format=raw). */
  data: unknown;
}

export interface View {
  view_type: ViewType;
  /** `${view_type}:` + a 16-hex hash of the blocks and temp blocks: same content, same id. */
  view_id: string;
  /** As-of time: the latest event timestamp among the view's input modules; null when none has data. */
  valid_from: string | null;
  /** Always null: a rendered view is the current one. */
  valid_to: string | null;
  /** The days the week segment covers, counted back from the time of the read. */
  window: ViewWindow;
  /**
   * Internal, not served: a time before the day's end after which the view must be
   * rendered again though no log arrived (a scheduled dose's window closes then).
   */
  expires_at?: string;
  /** Blocks of segments week and long_term, in template order. */
  blocks: ViewBlock[];
  /** Blocks of segment temp. */
  temp: ViewBlock[];
}

/** One dated fact behind a view (get_view_recent_events). */
export interface RecentEntry {
  timestamp: string;
  module_type: ModuleKey;
  /** What the entry is: a log type or a finer label (dose, lab_value, mood_report, ...). */
  kind: string;
  summary: string;
  log_id: string;
}

/** The week segment's days: the 7 calendar days in the patient's zone ending on the day read (null bounds without a time). */
export interface ViewWindow {
  days: number;
  first_day: string | null;
  last_day: string | null;
  time_zone: string;
}

/** The time frame of one rendering: given by the caller (the time of the read) or the state, never the clock. */
export interface Window {
  /** IANA zone of the patient: the calendar day of an instant. */
  tz: string;
  /** The instant the week ends at: the time of the read, or the view's as-of time. */
  asOf: string | null;
  /** The 7 calendar days ending on the day of `asOf`: YYYY-MM-DD bounds, inclusive ("" without a time). */
  firstDay: string;
  lastDay: string;
}

/** One view template: the modules it reads, its blocks (any segment, in order) and its dated entries. */
export interface ViewDef {
  type: ViewType;
  title: string;
  inputs: readonly ModuleKey[];
  blocks(state: PatientState, w: Window): ViewBlock[];
  entries(state: PatientState, w: Window): RecentEntry[];
  /** When what the blocks say changes with no new log (a dose's window closing), if before the day ends. */
  expiresAt?(state: PatientState, w: Window): string | null;
}
