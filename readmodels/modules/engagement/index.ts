import type { LogType } from "../../../catalog/log-types.js";
import { insertSorted, RECENT, replaceAt } from "../../lib/lists.js";
import { normName, num, str } from "../../lib/payload.js";
import { cmpTime, maxTime } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

export const ENGAGEMENT_TYPES = [
  "user_login", "user_logout", "content_interaction", "notification_interaction", "task_outcome",
  "interaction_feedback", "feature_usage",
] as const satisfies readonly LogType[];
type EngagementType = (typeof ENGAGEMENT_TYPES)[number];

export interface EngagementCount {
  total: number;
  /** By `action` (content, notification, task) or `feedback_type` (feedback). */
  by_action: Record<string, number>;
  last_at: string | null;
}

export interface FeatureUse {
  feature_name: string;
  uses: number;
  total_dwell_seconds: number;
  last_used_at: string;
}

export interface EngagementEvent {
  timestamp: string;
  log_id: string;
  log_type: EngagementType;
  action: string | null;
  /** What it was about: content_type, notification_type, task_type, target_type or feature_name. */
  subject: string | null;
}

export interface EngagementDoc {
  /** Latest engagement event of any kind, by event time. */
  last_active_at: string | null;
  counts: Record<EngagementType, EngagementCount>;
  features: FeatureUse[];
  /** The last 50 engagement events by event time. */
  recent: EngagementEvent[];
}

const ACTION_FIELD: Partial<Record<EngagementType, string>> = {
  content_interaction: "action", notification_interaction: "action", task_outcome: "action", interaction_feedback: "feedback_type",
};
const SUBJECT_FIELD: Partial<Record<EngagementType, string>> = {
  content_interaction: "content_type", notification_interaction: "notification_type", task_outcome: "task_type",
  interaction_feedback: "target_type", feature_usage: "feature_name",
};

export const handles: readonly LogType[] = ENGAGEMENT_TYPES;

export const engagement: ReadModel<"engagement", EngagementDoc> = {
  key: "engagement",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({
    last_active_at: null,
    counts: Object.fromEntries(ENGAGEMENT_TYPES.map((t) => [t, { total: 0, by_action: {}, last_at: null }])) as EngagementDoc["counts"],
    features: [],
    recent: [],
  }),
  evolve: (s, log) => {
    const type = log.log_type as EngagementType;
    const p = log.payload;
    const actionField = ACTION_FIELD[type];
    const subjectField = SUBJECT_FIELD[type];
    const action = actionField ? (str(p, actionField) ?? null) : null;
    const c = s.doc.counts[type] ?? { total: 0, by_action: {}, last_at: null };
    const count: EngagementCount = {
      total: c.total + 1,
      by_action: action === null ? c.by_action : { ...c.by_action, [action]: (c.by_action[action] ?? 0) + 1 },
      last_at: c.last_at === null ? log.timestamp : maxTime(c.last_at, log.timestamp),
    };
    let features = s.doc.features;
    const feature = type === "feature_usage" ? str(p, "feature_name") : undefined;
    if (feature !== undefined) {
      // "chat" and "Chat" are one feature; it is named as its latest use spelled it.
      const key = normName(feature);
      const at = features.findIndex((f) => normName(f.feature_name) === key);
      const f = at >= 0 ? features[at] : { feature_name: feature, uses: 0, total_dwell_seconds: 0, last_used_at: log.timestamp };
      features = replaceAt(features, at, {
        ...f, feature_name: cmpTime(log.timestamp, f.last_used_at) >= 0 ? feature : f.feature_name,
        uses: f.uses + 1, total_dwell_seconds: f.total_dwell_seconds + (num(p, "dwell_time_seconds") ?? 0),
        last_used_at: maxTime(f.last_used_at, log.timestamp),
      });
    }
    const event: EngagementEvent = {
      timestamp: log.timestamp, log_id: log.id, log_type: type, action,
      subject: subjectField ? (str(p, subjectField) ?? null) : null,
    };
    return withDoc(s, {
      last_active_at: s.doc.last_active_at === null ? log.timestamp : maxTime(s.doc.last_active_at, log.timestamp),
      counts: { ...s.doc.counts, [type]: count },
      features,
      recent: insertSorted(s.doc.recent, event, RECENT),
    });
  },
};
