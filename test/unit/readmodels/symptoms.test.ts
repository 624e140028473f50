import { describe, expect, it } from "vitest";
import { at, given, log, payload } from "./given.js";

const report = (t: string, instrument: string, symptoms: Record<string, unknown>[]) => log("symptom_report", t, { instrument, symptoms });

describe("symptoms", () => {
  it("resolves a symptom when a score of 0 arrives and reopens it on a later non-zero score", () => {
    const logs = [report(at(1), "esas_r", [{ name: "pain", score: 6 }]), report(at(2), "esas_r", [{ name: "pain", score: 0 }])];
    expect(payload(given(logs), "symptoms").symptoms[0]).toMatchObject({ status: "resolved", current_score: 0 });
    const reopened = payload(given([...logs, report(at(3), "esas_r", [{ name: "Pain", score: 2 }])]), "symptoms").symptoms[0];
    expect(reopened).toMatchObject({
      name: "Pain", status: "active", current_score: 2, instrument: "esas_r", first_reported_at: at(1), last_reported_at: at(3),
      scale_min: 0, scale_max: 10,
    });
    expect(reopened?.history.map((h) => h.score)).toEqual([6, 0, 2]);
  });

  it("keeps the same symptom reported through different instruments as one entry by its code", () => {
    const s = given([
      report(at(1), "esas_r", [{ name: "nausea", score: 5, snomed_code: "422587007" }]),
      report(at(2), "pro_ctcae", [{ name: "Nausea and vomiting", score: 2, snomed_code: "422587007", frequency: 3 }]),
      report(at(3), "ctcae", [{ name: "fatigue", score: 1, meddra_code: "10016256" }]),
      report(at(4), "custom", [{ name: "tiredness", score: 3, meddra_code: "10016256" }]),
    ]);
    const list = payload(s, "symptoms").symptoms;
    expect(list.map((x) => [x.snomed_code ?? x.meddra_code, x.instrument, x.current_score, x.history.length])).toEqual([
      ["422587007", "pro_ctcae", 2, 2],
      ["10016256", "custom", 3, 2],
    ]);
    expect(list[0]?.attributes).toEqual({ frequency: 3 });
  });

  it("keeps a code the entry learned when a later report leaves it out, so reports naming only that code still find it", () => {
    const fatigue = given([
      report(at(1), "custom", [{ name: "Fatigue", score: 4, snomed_code: "84229001", meddra_code: "10016256" }]),
      report(at(2), "ctcae", [{ name: "Fatigue", score: 2, meddra_code: "10016256" }]),
      report(at(3), "esas_r", [{ name: "tiredness", score: 5, snomed_code: "84229001" }]),
    ]);
    const [f, ...rest] = payload(fatigue, "symptoms").symptoms;
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ snomed_code: "84229001", meddra_code: "10016256", current_score: 5, instrument: "esas_r" });
    expect(f?.history).toHaveLength(3);

    const nausea = given([
      report(at(1), "ctcae", [{ name: "Nausea", score: 1, meddra_code: "10028813" }]),
      report(at(2), "pro_ctcae", [{ name: "Nausea", score: 2, meddra_code: "10028813", snomed_code: "422587007" }]),
      report(at(3), "esas_r", [{ name: "nausea", score: 3, snomed_code: "422587007" }]),
      report(at(4), "ctcae", [{ name: "Emesis-related nausea", score: 2, meddra_code: "10028813" }]),
    ]);
    const list = payload(nausea, "symptoms").symptoms;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ snomed_code: "422587007", meddra_code: "10028813", current_score: 2 });
    expect(list[0]?.history).toHaveLength(4);
  });

  it("finds a symptom by every name it was reported under, so a coded report that renamed it does not split it", () => {
    const logs = [
      report(at(1), "esas_r", [{ name: "nausea", score: 6 }]),
      report(at(2), "pro_ctcae", [{ name: "nausea", score: 3, snomed_code: "422587007" }]),
      report(at(3), "pro_ctcae", [{ name: "Nausea/vomiting", score: 2, snomed_code: "422587007" }]),
      report(at(4), "esas_r", [{ name: "nausea", score: 0 }]),
      log("symptom_detail", at(5), { symptom_type: "Nausea/Vomiting", detail_type: "trigger", response: "meals" }),
    ];
    for (const s of [given(logs), given([...logs].reverse())]) {
      const list = payload(s, "symptoms").symptoms;
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ name: "nausea", snomed_code: "422587007", status: "resolved", current_score: 0, aliases: ["nausea", "nausea/vomiting"] });
      expect(list[0]?.history.map((h) => h.score)).toEqual([6, 3, 2, 0]);
      expect(list[0]?.details.map((d) => d.response)).toEqual(["meals"]);
    }
  });

  it("never matches a name the entry was reported under when the report names another code of the same kind", () => {
    const s = given([
      report(at(1), "pro_ctcae", [{ name: "nausea", score: 3, snomed_code: "422587007" }]),
      report(at(2), "pro_ctcae", [{ name: "Nausea/vomiting", score: 2, snomed_code: "422587007" }]),
      report(at(3), "ctcae", [{ name: "nausea", score: 1, snomed_code: "16932000" }]),
    ]);
    expect(payload(s, "symptoms").symptoms.map((x) => [x.snomed_code, x.name, x.aliases])).toEqual([
      ["422587007", "Nausea/vomiting", ["nausea", "nausea/vomiting"]],
      ["16932000", "nausea", ["nausea"]],
    ]);
  });

  it("keeps at most ten names per symptom, the first ten by event time, sorted", () => {
    const names = ["j", "i", "h", "g", "f", "e", "d", "c", "b", "a", "k"];
    const s = given(names.map((name, i) => report(at(1, i), "custom", [{ name, score: 1, snomed_code: "1" }])));
    const [x] = payload(s, "symptoms").symptoms;
    expect(x?.aliases).toEqual(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]);
    // The current name still finds it.
    expect(payload(given([...names.map((name, i) => report(at(1, i), "custom", [{ name, score: 1, snomed_code: "1" }])), report(at(2), "esas_r", [{ name: "K", score: 0 }])]), "symptoms").symptoms).toHaveLength(1);
  });

  it("takes the current score from the latest report by event time, whatever order they arrive in", () => {
    const s = given([report(at(3), "esas_r", [{ name: "pain", score: 0 }]), report(at(1), "esas_r", [{ name: "pain", score: 7 }])]);
    expect(payload(s, "symptoms").symptoms[0]).toMatchObject({ status: "resolved", current_score: 0 });
  });

  it("attaches symptom details and their source to the matched symptom, even when the detail came first", () => {
    const s = given([
      log("symptom_detail", at(1), { symptom_type: "pain", detail_type: "location", response: "lower back", source: "chat" }),
      report(at(2), "esas_r", [{ name: "Pain", score: 4 }]),
      log("symptom_detail", at(3), { symptom_type: "PAIN", detail_type: "duration", question: "How long?", response: "3 days" }),
    ]);
    const d = payload(s, "symptoms");
    expect(d.pending_details).toEqual([]);
    expect(d.symptoms[0]?.details.map((x) => [x.detail_type, x.response])).toEqual([["location", "lower back"], ["duration", "3 days"]]);
    expect(d.symptoms[0]?.sources.map((x) => x.source)).toEqual(["chat", null, null]);
  });

  it("keeps free-text reports and health metrics beside the tracked symptoms", () => {
    const s = given([
      log("symptom_free_text", at(1), { text: "Dizzy after lunch", associated_symptoms: [{ name: "dizziness" }], source: "patient_app" }),
      log("health_metric", at(1), { metric_type: "energy", score: 4, scale_min: 0, scale_max: 10 }),
      log("health_metric", at(2), { metric_type: "Energy", score: 6, scale_min: 0, scale_max: 10 }),
    ]);
    const d = payload(s, "symptoms");
    expect(d.free_text[0]).toMatchObject({ text: "Dizzy after lunch", associated_symptoms: [{ name: "dizziness", snomed_code: null, meddra_code: null }], source: "patient_app" });
    expect(d.health_metrics).toEqual([expect.objectContaining({ metric_type: "energy", latest: expect.objectContaining({ score: 6 }) })]);
    expect(d.health_metrics[0]?.history).toHaveLength(2);
  });
});

describe("emotional_state", () => {
  it("tracks each mood with intensity history, resolving it at intensity 0", () => {
    const s = given([
      log("mood_report", at(1), { moods: [{ mood: "Anxious", intensity: 7 }, { mood: "hopeful", intensity: null }] }),
      log("mood_report", at(2), { moods: [{ mood: "anxious", intensity: 0 }] }),
    ]);
    const d = payload(s, "emotional_state");
    expect(d.moods.map((m) => [m.mood, m.status, m.current_intensity, m.history.length])).toEqual([["Anxious", "resolved", 0, 2], ["hopeful", "active", null, 1]]);
    expect(d.latest_report).toMatchObject({ timestamp: at(2), moods: [{ mood: "anxious", intensity: 0 }] });
  });
});
