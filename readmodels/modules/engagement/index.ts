import type { LogType } from "../../../catalog/log-types.js";
import { insertSorted, RECENT, replaceAt } from "../../lib/lists.js";
import type { LogOf, TypedLog } from "../../log-record.js";
import { finite, normName, text } from "../../lib/payload.js";
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

/** What an event did (`action`, or a feedback's `feedback_type`) and what it was about. */
function describe(log: TypedLog<EngagementType>): { action: string | undefined; subject: string | undefined } {
  switch (log.log_type) {
    case "content_interaction":
      return { action: text(log.payload.action), subject: text(log.payload.content_type) };
    case "notification_interaction":
      return { action: text(log.payload.action), subject: text(log.payload.notification_type) };
    case "task_outcome":
      return { action: text(log.payload.action), subject: text(log.payload.task_type) };
    case "interaction_feedback":
      return { action: text(log.payload.feedback_type), subject: text(log.payload.target_type) };
    case "feature_usage":
      return { action: undefined, subject: text(log.payload.feature_name) };
    case "user_login":
    case "user_logout":
      return { action: undefined, subject: undefined };
    default: {
      const unhandled: never = log;
      void unhandled;
      return { action: undefined, subject: undefined };
    }
  }
}

/**
 * What makes two feature names one feature: "chat" and " Chat " are one, whatever their
 * case or spacing. The views group a feature's uses by it too, so they count as this does.
 */
export const featureKey = (name: string): string => normName(name);

/** The features with one more use of the one the log names; it is named as its latest use spelled it. */
function useFeature(features: FeatureUse[], log: LogOf<"feature_usage">): FeatureUse[] {
  const feature = text(log.payload.feature_name);
  if (feature === undefined) return features;
  const key = featureKey(feature);
  const at = features.findIndex((f) => featureKey(f.feature_name) === key);
  const f = at >= 0 ? features[at]! : { feature_name: feature, uses: 0, total_dwell_seconds: 0, last_used_at: log.timestamp };
  return replaceAt(features, at, {
    ...f, feature_name: cmpTime(log.timestamp, f.last_used_at) >= 0 ? feature : f.feature_name,
    uses: f.uses + 1, total_dwell_seconds: f.total_dwell_seconds + (finite(log.payload.dwell_time_seconds) ?? 0),
    last_used_at: maxTime(f.last_used_at, log.timestamp),
  });
}

export const handles = ENGAGEMENT_TYPES;

export const engagement: ReadModel<"engagement", EngagementDoc, EngagementType> = {
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
    const type = log.log_type;
    const described = describe(log);
    const action = described.action ?? null;
    const c = s.doc.counts[type] ?? { total: 0, by_action: {}, last_at: null };
    const count: EngagementCount = {
      total: c.total + 1,
      by_action: action === null ? c.by_action : { ...c.by_action, [action]: (c.by_action[action] ?? 0) + 1 },
      last_at: c.last_at === null ? log.timestamp : maxTime(c.last_at, log.timestamp),
    };
    const features = log.log_type === "feature_usage" ? useFeature(s.doc.features, log) : s.doc.features;
    const event: EngagementEvent = {
      timestamp: log.timestamp, log_id: log.id, log_type: type, action,
      subject: described.subject ?? null,
    };
    return withDoc(s, {
      last_active_at: s.doc.last_active_at === null ? log.timestamp : maxTime(s.doc.last_active_at, log.timestamp),
      counts: { ...s.doc.counts, [type]: count },
      features,
      recent: insertSorted(s.doc.recent, event, RECENT),
    });
  },
};
