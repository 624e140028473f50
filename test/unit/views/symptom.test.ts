import { describe, expect, it } from "vitest";
import { renderView } from "../../../readmodels/views/index.js";
import { at, given, log } from "../readmodels/given.js";
import { blockOf, shape, symptomLogs } from "./fixtures.js";

describe("symptom_snapshot", () => {
  const f = symptomLogs();
  const v = renderView("symptom_snapshot", given(f.logs));

  it("renders active, changed and resolved symptoms, mood, metrics and follow-ups in their segments", () => {
    expect(v.valid_from).toBe(at(20, 12));
    expect(v.valid_to).toBeNull();
    expect(shape(v)).toEqual([
      ["active_symptoms", "long_term"], ["week_changes", "week"], ["resolved_symptoms", "long_term"], ["mood", "week"],
      ["health_metrics", "week"], ["patient_notes", "week"], ["symptoms_to_follow_up", "temp"],
    ]);
  });

  it("shows each active symptom with its score, instrument, trend against the previous report and since when", () => {
    const b = blockOf(v, "active_symptoms");
    expect(b.text.split("\n")).toEqual([
      "- **pain**: 8/10 (esas_r) on 2025-03-15, up from 5/10 (esas_r) on 2025-03-10; active since 2025-03-01; location: lower back",
      "- **Diarrhea**: 3/4 (pro_ctcae) on 2025-03-16, first report; active since 2025-03-16",
    ]);
    expect(b.refs).toEqual([f.first.id, f.painBefore.id, f.painWorse.id, f.diarrhea.id, f.painDetail.id].sort());
  });

  it("calls a symptom that went to 0 resolved even when another instrument reported the 0", () => {
    const logs = [
      log("symptom_report", at(1), { instrument: "esas_r", symptoms: [{ name: "nausea", score: 4 }] }),
      log("symptom_report", at(20), { instrument: "pro_ctcae", symptoms: [{ name: "nausea", score: 0 }] }),
    ];
    const b = blockOf(renderView("symptom_snapshot", given(logs)), "week_changes");
    expect((b.data as { name: string; change: string }[]).map((x) => [x.name, x.change])).toEqual([["nausea", "resolved"]]);
  });

  it("classifies the week's changes against the last report before the week", () => {
    const b = blockOf(v, "week_changes");
    expect((b.data as { name: string; change: string }[]).map((x) => [x.name, x.change])).toEqual([["pain", "worsened"], ["fatigue", "resolved"], ["Diarrhea", "new"]]);
    expect(b.refs).toEqual([f.first.id, f.painBefore.id, f.painWorse.id, f.diarrhea.id, f.fatigueGone.id].sort());
  });

  it("lists resolved symptoms with when they resolved", () => {
    const b = blockOf(v, "resolved_symptoms");
    expect(b.text).toContain("**nausea**: resolved 2025-03-05; last non-zero 5/10 (esas_r) on 2025-03-01");
    expect(b.text).toContain("**fatigue**: resolved 2025-03-18");
    expect(b.refs).toEqual(expect.arrayContaining([f.nauseaGone.id, f.fatigueGone.id]));
  });

  it("keeps mood and health metrics to the last 7 days", () => {
    expect(blockOf(v, "mood").refs).toEqual([f.mood.id]);
    expect(blockOf(v, "mood").text).toBe("- **anxious**: 7/10 on 2025-03-17\n- **hopeful**: 3/10 on 2025-03-17");
    const m = blockOf(v, "health_metrics");
    expect(m.refs).toEqual([f.energy1.id, f.energy2.id]);
    expect(m.text).toBe("- **energy**: 6/10 on 2025-03-20; mean 5, range 4–6 (2 readings)");
  });

  it("asks to follow up severe scores (>= 7 of 10, >= 3 PRO-CTCAE) and details without a score", () => {
    const b = blockOf(v, "symptoms_to_follow_up");
    expect(b.segment).toBe("temp");
    expect(b.text.split("\n")).toEqual([
      "- **pain**: severe, 8/10 (esas_r) on 2025-03-15",
      "- **Diarrhea**: severe, 3/4 (pro_ctcae) on 2025-03-16",
      '- **dizziness**: trigger "standing up" reported 2025-03-19 with no score yet: ask for a severity score',
    ]);
    expect(b.refs).toEqual([f.painWorse.id, f.diarrhea.id, f.pendingDetail.id].sort());
  });

  it("does not call a moderate score severe", () => {
    const s = given([log("symptom_report", at(1), { instrument: "esas_r", symptoms: [{ name: "pain", score: 6 }] }), log("symptom_report", at(1), { instrument: "ctcae", symptoms: [{ name: "rash", score: 2 }] })]);
    expect(renderView("symptom_snapshot", s).temp).toEqual([]);
  });

  it("reports a symptom that came back after resolving as returned", () => {
    const s = given([
      log("symptom_report", at(1), { instrument: "esas_r", symptoms: [{ name: "pain", score: 5 }] }),
      log("symptom_report", at(2), { instrument: "esas_r", symptoms: [{ name: "pain", score: 0 }] }),
      log("symptom_report", at(9), { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }] }),
    ]);
    const view = renderView("symptom_snapshot", s);
    expect(blockOf(view, "week_changes").data).toEqual([expect.objectContaining({ change: "returned" })]);
    expect(blockOf(view, "active_symptoms").text).toContain("active since 2025-03-09");
  });

  it("says when the week may be cut by the kept history, without calling the symptom new or its first kept report the first", () => {
    const hourly = Array.from({ length: 60 }, (_, i) =>
      log("symptom_report", new Date(Date.parse(at(17)) + i * 3_600_000).toISOString(), { instrument: "esas_r", symptoms: [{ name: "pain", score: i < 10 ? 2 : 5 }] }));
    const b = blockOf(renderView("symptom_snapshot", given(hourly)), "week_changes");
    expect(b.text).toBe("- **pain**: stable, earliest kept report 5/10 (esas_r) on 2025-03-17 → 5/10 (esas_r) on 2025-03-19 (at least 50 reports this week; older ones not kept)");
    expect(b.data).toEqual([expect.objectContaining({ change: "stable", reports_this_week: 50, partial: true, from: expect.objectContaining({ log_id: hourly[10]!.id }) })]);
    expect(b.refs).not.toContain(hourly[9]!.id);
  });

  it("calls a week of exactly as many reports as are kept complete", () => {
    const hourly = Array.from({ length: 50 }, (_, i) =>
      log("symptom_report", new Date(Date.parse(at(17)) + i * 3_600_000).toISOString(), { instrument: "esas_r", symptoms: [{ name: "pain", score: i < 10 ? 2 : 5 }] }));
    const b = blockOf(renderView("symptom_snapshot", given(hourly)), "week_changes");
    expect(b.text).toBe("- **pain**: new, 2/10 (esas_r) on 2025-03-17 → 5/10 (esas_r) on 2025-03-19 (50 reports this week)");
    expect(b.data).toEqual([expect.objectContaining({ partial: false })]);
  });
});

describe("symptom_snapshot: a run older than the history kept", () => {
  it("says 'active since at least' the oldest report kept, with the first report", () => {
    // Three reports a day over 20 days: 60, of which the module keeps the last 50.
    const logs = Array.from({ length: 60 }, (_, i) => log("symptom_report", at(1 + Math.floor(i / 3), 8 + (i % 3) * 4), { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }] }));
    const line = blockOf(renderView("symptom_snapshot", given(logs)), "active_symptoms").text;
    expect(line).toContain("active since at least 2025-03-04 (first reported 2025-03-01)");
  });
});
