import { describe, expect, it } from "vitest";
import { at, given, log, payload } from "./given.js";

describe("engagement", () => {
  it("counts engagement events per type and action, feature use, and the last activity", () => {
    const s = given([
      log("user_login", at(1, 8), {}),
      log("content_interaction", at(1, 9), { content_type: "article", action: "viewed", dwell_time_seconds: 30 }),
      log("content_interaction", at(1, 10), { content_type: "video", action: "viewed" }),
      log("content_interaction", at(1, 11), { content_type: "video", action: "dismissed" }),
      log("feature_usage", at(1, 12), { feature_name: "diary", dwell_time_seconds: 40 }),
      log("feature_usage", at(2, 12), { feature_name: "diary", dwell_time_seconds: 20 }),
      log("notification_interaction", at(2, 13), { notification_type: "medication_reminder", action: "opened" }),
      log("user_logout", at(2, 14), {}),
    ]);
    const d = payload(s, "engagement");
    expect(d.last_active_at).toBe(at(2, 14));
    expect(d.counts.content_interaction).toEqual({ total: 3, by_action: { viewed: 2, dismissed: 1 }, last_at: at(1, 11) });
    expect(d.counts.user_login.total).toBe(1);
    expect(d.counts.task_outcome.total).toBe(0);
    expect(d.features).toEqual([{ feature_name: "diary", uses: 2, total_dwell_seconds: 60, last_used_at: at(2, 12) }]);
    expect(d.recent.map((e) => e.subject)).toEqual([null, "article", "video", "video", "diary", "diary", "medication_reminder", null]);
  });

  it("counts one feature whatever its case or spacing, named as its latest use spelled it", () => {
    const uses = [log("feature_usage", at(1, 12), { feature_name: "chat" }), log("feature_usage", at(2, 12), { feature_name: " Chat " })];
    for (const order of [uses, [...uses].reverse()]) {
      expect(payload(given(order), "engagement").features).toEqual([{ feature_name: " Chat ", uses: 2, total_dwell_seconds: 0, last_used_at: at(2, 12) }]);
    }
  });
});

describe("conversations", () => {
  it("keeps conversation state per conversation_id from its turns, and summarises it into memory when it ends", () => {
    const s = given([
      log("conversation_turn", at(1, 9, 0), { conversation_id: "c1", turn_index: 0, speaker_label: "agent", text: "How are you?", channel: "chat" }),
      log("conversation_turn", at(1, 9, 1), { conversation_id: "c1", turn_index: 1, speaker_label: "patient", text: "Tired, slept badly." }),
      log("conversation", at(1, 9, 5), { conversation_id: "c1", duration_seconds: 300, flagged: true, flag_reason: "fatigue" }),
      log("memory_report", at(1, 10), { content: "Enjoys gardening.", type: "interests_concerns" }),
    ]);
    const d = payload(s, "conversations");
    expect(d.conversations).toEqual([expect.objectContaining({
      conversation_id: "c1", status: "ended", channel: "chat", turn_count: 2, started_at: at(1, 9, 0), ended_at: at(1, 9, 5),
      duration_seconds: 300, flagged: true,
    })]);
    expect(d.memories.map((m) => [m.origin, m.type, m.content])).toEqual([
      ["conversation", "conversation_summary", 'Conversation c1 (via chat, 2 turns, 300s). Flagged: fatigue. Patient said: "Tired, slept badly."'],
      ["memory_report", "interests_concerns", "Enjoys gardening."],
    ]);
  });

  it("summarises a conversation sent whole with its transcript", () => {
    const s = given([log("conversation", at(1), {
      conversation_id: "c9", channel: "voice",
      transcript: [{ speaker_label: "agent", text: "Hi" }, { speaker_label: "patient", text: "My knee hurts." }],
    })]);
    const [c] = payload(s, "conversations").conversations;
    expect(c).toMatchObject({ status: "ended", turn_count: 2 });
    expect(payload(s, "conversations").memories[0]?.content).toContain('Patient said: "My knee hurts."');
  });
});
