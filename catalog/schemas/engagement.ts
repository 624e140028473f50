import { entry, type CatalogEntry } from "../issues.js";
import type { LOG_GROUPS } from "../log-types.js";
import { Count, DateTimeStr, Enum, Extensions, Obj, Opt, ReqStr, Str } from "./common.js";

// Engagement types are all extensible and point-in-time; none carries `source`.
const ext = { extensions: Opt(Extensions) };

export const UserLogin = Obj({ ...ext });
export const UserLogout = Obj({ ...ext });

export const ContentInteraction = Obj({
  content_type: ReqStr({ description: "card, article, video, recipe, or client-defined" }),
  action: Enum(["viewed", "bookmarked", "dismissed", "completed", "shared", "clicked"]),
  content_id: Opt(Str()),
  title: Opt(Str()),
  preview: Opt(Str()),
  dwell_time_seconds: Opt(Count({ description: "For action viewed" })),
  reason: Opt(Str({ description: "For action dismissed" })),
  ...ext,
});

export const NotificationInteraction = Obj({
  notification_type: ReqStr({ description: "Client-defined, for example medication_reminder, symptom_checkin, lab_result" }),
  action: Enum(["opened", "dismissed", "snoozed"]),
  delivered_at: Opt(DateTimeStr()),
  time_to_open_seconds: Opt(Count({ description: "For action opened" })),
  ...ext,
});

export const TaskOutcome = Obj({
  task_type: ReqStr({ description: "Client-defined, for example checkin, questionnaire, onboarding_step, medication_log" }),
  action: Enum(["completed", "skipped"]),
  task_id: Opt(Str()),
  task_description: Opt(Str()),
  completion_time_seconds: Opt(Count()),
  ...ext,
});

export const InteractionFeedback = Obj({
  target_type: ReqStr({ description: "message, content, or client-defined" }),
  target_id: Opt(Str()),
  feedback_type: Enum(["thumbs_up", "thumbs_down", "bookmarked", "flagged"]),
  ...ext,
});

export const FeatureUsage = Obj({
  feature_name: ReqStr({ description: "Client-defined" }),
  session_id: Opt(Str({ description: "Links the feature_usage events of one app session" })),
  dwell_time_seconds: Opt(Count()),
  ...ext,
});

export const engagementEntries = {
  user_login: entry(UserLogin),
  user_logout: entry(UserLogout),
  content_interaction: entry(ContentInteraction),
  notification_interaction: entry(NotificationInteraction),
  task_outcome: entry(TaskOutcome),
  interaction_feedback: entry(InteractionFeedback),
  feature_usage: entry(FeatureUsage),
} satisfies Record<(typeof LOG_GROUPS)["engagement"][number], CatalogEntry>;
