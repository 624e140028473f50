import { describe, expect, it } from "vitest";
import { renderView } from "../../../readmodels/views/index.js";
import { at, given, log } from "../readmodels/given.js";
import { blockOf, engagementLogs, questionnaireLogs, shape } from "./fixtures.js";

describe("engagement_snapshot", () => {
  const f = engagementLogs();
  const v = renderView("engagement_snapshot", given(f.logs));

  it("renders the week's activity and feature use, and conversations and memories as long-term", () => {
    expect(shape(v)).toEqual([["activity_week", "week"], ["feature_usage", "week"], ["conversations", "long_term"], ["memories", "long_term"]]);
  });

  it("counts logins and content, notification and task activity of the last 7 days only", () => {
    const b = blockOf(v, "activity_week");
    expect(b.text.split("\n")).toEqual([
      "- **Last active**: 2025-03-19",
      "- **Logins**: 2",
      "- **Content**: 3 (viewed 2, dismissed 1; video 2, article 1)",
      "- **Notifications**: 1 (opened 1; medication_reminder 1)",
      "- **Tasks**: 1 (completed 1; checkin 1)",
    ]);
    expect(b.refs).toEqual([f.login1.id, f.article.id, f.video.id, f.dismissed.id, f.reminder.id, f.login2.id, f.task.id, f.diary.id].sort());
    expect(b.refs).not.toContain(f.oldLogin.id);
  });

  it("gives the week's feature use with all-time totals", () => {
    expect(blockOf(v, "feature_usage")).toMatchObject({ refs: [f.diary.id], text: "- **diary**: 1 use, last 2025-03-19 (all time: 2 uses, 12 min)" });
  });

  it("gives one line per feature whatever its case or spacing, counted and named as the module counts it", () => {
    const title = log("feature_usage", "2026-11-24T12:00:00.000Z", { feature_name: "Symptom Tracker", dwell_time_seconds: 30 });
    const lower = log("feature_usage", "2026-11-25T12:00:00.000Z", { feature_name: "symptom  tracker", dwell_time_seconds: 40 });
    const b = blockOf(renderView("engagement_snapshot", given([title, lower])), "feature_usage");
    expect(b.text).toBe("- **symptom tracker**: 2 uses, last 2026-11-25 (all time: 2 uses, 1 min)");
    expect(b.data).toEqual([{
      feature_name: "symptom  tracker", uses_this_week: 2, last_used_at: lower.timestamp, total_uses: 2, total_dwell_seconds: 70,
    }]);
    expect(b.refs).toEqual([title.id, lower.id]);
  });

  it("says a single use in all time in the singular", () => {
    const once = log("feature_usage", at(19), { feature_name: "diary" });
    expect(blockOf(renderView("engagement_snapshot", given([once])), "feature_usage").text).toBe("- **diary**: 1 use, last 2025-03-19 (all time: 1 use)");
  });

  it("summarises conversations and lists memories newest first", () => {
    const c = blockOf(v, "conversations");
    expect(c.text).toBe("- 2025-03-12 **chat** (c1): ended, 2 turns, 5 min, flagged: fatigue");
    expect(c.refs).toEqual(expect.arrayContaining([f.turn1.id, f.turn2.id, f.ended.id]));
    const m = blockOf(v, "memories");
    expect(m.text.split("\n")[0]).toBe("- 2025-03-20 [interests concerns]: Enjoys gardening.");
    expect(m.refs).toEqual([f.ended.id, f.memory.id].sort());
  });
});

describe("questionnaire_snapshot", () => {
  const f = questionnaireLogs();
  const v = renderView("questionnaire_snapshot", given(f.logs));

  it("renders latest scores, the week's administrations and significant results", () => {
    expect(shape(v)).toEqual([["latest_scores", "long_term"], ["week_administrations", "week"], ["significant_results", "temp"]]);
  });

  it("gives the latest score per instrument with severity and change against the prior one", () => {
    const b = blockOf(v, "latest_scores");
    expect(b.text.split("\n")).toEqual([
      "- **PHQ-9**: 19/27 (moderately severe) on 2025-03-16; +7 from 12 on 2025-03-01 (worsened, exceeds MID); clinically significant; 2 administrations",
      "- **GAD-7**: 5/21 (mild) on 2025-03-05; 1 administration",
    ]);
    expect(b.refs).toEqual([f.phqOld.id, f.gad.id, f.phqNew.id].sort());
  });

  it("shows a change the client reported when the service holds no earlier administration", () => {
    const only = log("questionnaire_response", at(20), {
      instrument: { instrument_id: "PHQ-9", instrument_type: "validated" }, administration: { administration_mode: "patient_self_report" },
      item_responses: [{ item_number: 1, response_value: 2 }], scores: { total_score: 18, total_score_max: 27 },
      change: { prior_score: 8, prior_date: "2025-02-01", change: 10, change_classification: "worsened", minimally_important_difference: 5 },
    });
    const b = blockOf(renderView("questionnaire_snapshot", given([only])), "latest_scores");
    expect(b.text).toBe("- **PHQ-9**: 18/27 on 2025-03-20; +10 from 8 on 2025-02-01 (as reported, worsened, exceeds MID); 1 administration");
    expect(b.refs).toEqual([only.id]);
  });

  it("lists the week's administrations and item answers, newest first", () => {
    const b = blockOf(v, "week_administrations");
    expect(b.text).toBe("- 2025-03-20 **How is your pain today?**: 3/10\n- 2025-03-16 **PHQ-9**: 19/27 (moderately severe)");
    expect(b.refs).toEqual([f.phqNew.id, f.item.id].sort());
  });

  it("flags clinically significant or client-classified worsening results", () => {
    expect(blockOf(v, "significant_results")).toMatchObject({
      segment: "temp", text: "- **PHQ-9**: 19/27 (moderately severe) on 2025-03-16: clinically significant, worsened", refs: [f.phqOld.id, f.phqNew.id].sort(),
    });
  });
});
