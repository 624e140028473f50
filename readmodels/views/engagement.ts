/** engagement_snapshot: the week's app activity and feature use, conversations and memories. */
import type { Conversation } from "../modules/conversations/index.js";
import { featureKey, type EngagementEvent } from "../modules/engagement/index.js";
import { cmpTime } from "../lib/time.js";
import type { PatientState } from "../patient-state.js";
import { block, clean, cmp, day, doc, entry, fmt, inWeek, parts, plural, words } from "./lib.js";
import type { RecentEntry, ViewBlock, ViewDef, Window } from "./types.js";

/** The engagement module keeps the latest 50 events: a busier week is only partly seen. */
const RECENT_EVENTS = 50;
const CONVERSATIONS = 5;
const MEMORIES = 10;

const ACTIVITY: [EngagementEvent["log_type"], string][] = [
  ["user_login", "Logins"], ["content_interaction", "Content"], ["notification_interaction", "Notifications"],
  ["task_outcome", "Tasks"], ["interaction_feedback", "Feedback"],
];

/** "viewed 2, dismissed 1": counts of a field's values, most frequent first. */
function tally(values: readonly (string | null)[]): string {
  const m = new Map<string, number>();
  for (const v of values) if (v !== null) m.set(v, (m.get(v) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => b[1] - a[1] || cmp(a[0], b[0])).map(([k, n]) => `${clean(k, 40)} ${n}`).join(", ");
}

function activityBlock(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "engagement");
  if (!d) return [];
  const wk = d.recent.filter((e) => inWeek(w, e.timestamp));
  const lastEvent = d.recent.find((e) => e.timestamp === d.last_active_at);
  const lines: string[] = [];
  if (d.last_active_at !== null) lines.push(`**Last active**: ${day(d.last_active_at, w.tz)}`);
  const data: Record<string, unknown> = { last_active_at: d.last_active_at };
  for (const [type, label] of ACTIVITY) {
    const es = wk.filter((e) => e.log_type === type);
    if (es.length === 0) continue;
    const detail = [tally(es.map((e) => e.action)), tally(es.map((e) => e.subject))].filter((x) => x !== "").join("; ");
    lines.push(`**${label}**: ${es.length}${detail ? ` (${detail})` : ""}`);
    data[type] = { count: es.length, actions: es.map((e) => e.action), subjects: es.map((e) => e.subject) };
  }
  if (wk.length === 0 && lines.length > 0) lines.push("No app activity in the last 7 days");
  const partial = d.recent.length >= RECENT_EVENTS && wk.length === d.recent.length;
  if (partial) lines.push(`Counts cover the latest ${RECENT_EVENTS} events, from ${day(d.recent[0]!.timestamp, w.tz)}`);
  return block("activity_week", "App activity (last 7 days)", "week", lines,
    [...wk.filter((e) => e.log_type !== "feature_usage" && e.log_type !== "user_logout").map((e) => e.log_id), lastEvent?.log_id ?? ""],
    { ...data, partial });
}

/** The week's feature_usage events, one group per feature as the module counts them (by featureKey). */
function weekFeatures(recent: readonly EngagementEvent[], w: Window): Map<string | null, EngagementEvent[]> {
  const groups = new Map<string | null, EngagementEvent[]>();
  for (const e of recent) {
    if (e.log_type !== "feature_usage" || !inWeek(w, e.timestamp)) continue;
    const key = e.subject === null ? null : featureKey(e.subject);
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  return groups;
}

function featureBlock(state: PatientState, w: Window): ViewBlock[] {
  const d = doc(state, "engagement");
  const rows = [...weekFeatures(d?.recent ?? [], w)].map(([key, es]) => {
    const all = key === null ? undefined : d?.features.find((f) => featureKey(f.feature_name) === key);
    const last = es[es.length - 1]!;
    return {
      // Named as the module names it (its latest use's spelling); a use without a name is "unnamed".
      feature_name: all?.feature_name ?? last.subject ?? "unnamed", uses_this_week: es.length, last_used_at: last.timestamp,
      total_uses: all?.uses ?? null, total_dwell_seconds: all?.total_dwell_seconds ?? null, log_ids: es.map((e) => e.log_id),
    };
  }).sort((a, b) => cmp(featureKey(a.feature_name), featureKey(b.feature_name)));
  const lines = rows.map((r) => {
    const dwell = r.total_dwell_seconds ? `, ${fmt(r.total_dwell_seconds / 60, 0)} min` : "";
    const total = r.total_uses !== null ? ` (all time: ${plural(r.total_uses, "use")}${dwell})` : "";
    return `**${clean(r.feature_name, 60)}**: ${plural(r.uses_this_week, "use")}, last ${day(r.last_used_at, w.tz)}${total}`;
  });
  return block("feature_usage", "Feature usage (last 7 days)", "week", lines, rows.flatMap((r) => r.log_ids), rows.map(({ log_ids: _l, ...r }) => r));
}

function conversationLine(c: Conversation, w: Window): string {
  const ps = parts(
    c.status, plural(c.turn_count, "turn"),
    c.duration_seconds !== null && `${fmt(c.duration_seconds / 60, 0)} min`,
    c.flagged && `flagged${c.flag_reason ? `: ${clean(c.flag_reason, 80)}` : ""}`,
  );
  return `${day(c.started_at, w.tz)} **${c.channel ? words(c.channel) : "conversation"}** (${clean(c.conversation_id, 40)}): ${ps.join(", ")}`;
}

const byActivity = (a: Conversation, b: Conversation) => cmpTime(b.last_activity_at, a.last_activity_at) || cmp(a.conversation_id, b.conversation_id);

function blocks(state: PatientState, w: Window): ViewBlock[] {
  const cv = doc(state, "conversations");
  const convs = [...(cv?.conversations ?? [])].sort(byActivity).slice(0, CONVERSATIONS);
  const memories = [...(cv?.memories ?? [])].reverse().slice(0, MEMORIES);
  // A conversation's own log ids: its turns, and the summary memory written when it ended.
  const summaryIds = (c: Conversation) =>
    (cv?.memories ?? []).filter((m) => m.conversation_id === c.conversation_id && m.origin === "conversation").map((m) => m.log_id);
  return [
    ...activityBlock(state, w),
    ...featureBlock(state, w),
    ...block("conversations", "Recent conversations", "long_term", convs.map((c) => conversationLine(c, w)),
      convs.flatMap((c) => [...c.recent_turns.map((t) => t.log_id), ...summaryIds(c)]),
      convs.map(({ recent_turns: _t, participants: _p, ...c }) => c)),
    ...block("memories", "Memories", "long_term",
      memories.map((m) => `${day(m.timestamp, w.tz)}${m.type ? ` [${words(m.type)}]` : ""}: ${clean(m.content, 280)}`),
      memories.map((m) => m.log_id),
      memories.map((m) => ({ timestamp: m.timestamp, type: m.type, content: m.content, origin: m.origin, conversation_id: m.conversation_id }))),
  ];
}

function entries(state: PatientState): RecentEntry[] {
  const cv = doc(state, "conversations");
  return [
    ...(doc(state, "engagement")?.recent ?? []).map((e) => entry("engagement", e.log_type, e, parts(words(e.log_type), e.action, e.subject).join(" "))),
    ...(cv?.conversations ?? []).flatMap((c) =>
      c.recent_turns.map((t) => entry("conversations", "conversation_turn", t, `${t.speaker_label}: ${clean(t.text, 100)}`))),
    ...(cv?.memories ?? []).map((m) =>
      entry("conversations", m.origin === "conversation" ? "conversation_summary" : "memory_report", m, clean(m.content, 120))),
  ];
}

export const engagementSnapshot: ViewDef = {
  type: "engagement_snapshot", title: "Engagement snapshot", inputs: ["engagement", "conversations"], blocks, entries,
};
