import { describe, expect, it } from "vitest";
import { at, given, log, payload } from "./given.js";

const phq = (t: string, total: number | null, change?: Record<string, unknown>) =>
  log("questionnaire_response", t, {
    instrument: { instrument_id: "PHQ-9", instrument_type: "validated" },
    administration: { administration_mode: "patient_self_report" },
    item_responses: [{ item_number: 1, response_value: 1 }],
    scores: total === null ? {} : { total_score: total },
    ...(change ? { change } : {}),
  });

const changeOf = (logs: ReturnType<typeof phq>[]) => payload(given(logs), "questionnaires").instruments[0]!.change;

describe("questionnaire change sent by the client", () => {
  it("keeps the client's change when the service holds no earlier administration", () => {
    const sent = { prior_score: 8, prior_date: "2025-02-01", change: 10, change_classification: "worsened", minimally_important_difference: 5 };
    expect(changeOf([phq(at(1), 18, sent)])).toEqual({
      prior_score: 8, prior_date: "2025-02-01", change: 10, basis: "client", direction: "increased", exceeds_mid: true, classification: "worsened",
    });
  });

  it("derives the client's change from its prior score and the total, or its prior score from the change", () => {
    expect(changeOf([phq(at(1), 6, { prior_score: 9 })])).toMatchObject({ prior_score: 9, prior_date: null, change: -3, basis: "client", direction: "decreased" });
    expect(changeOf([phq(at(1), 6, { change: 2 })])).toMatchObject({ prior_score: 4, change: 2, basis: "client" });
    expect(changeOf([phq(at(1), null, { change: 2 })])).toMatchObject({ prior_score: null, change: 2, basis: "client" });
    expect(changeOf([phq(at(1), 6, { change_classification: "stable" })])).toBeNull();
  });

  it("computes the change from its own history when it has one, whatever the client sent", () => {
    const c = changeOf([phq(at(1), 14), phq(at(8), 18, { prior_score: 3, prior_date: "2024-01-01", change: 15, change_classification: "worsened" })]);
    expect(c).toEqual({ prior_score: 14, prior_date: at(1), change: 4, basis: "history", direction: "increased", exceeds_mid: null, classification: "worsened" });
  });

  it("falls back to the client's change when the latest administration has no total to compare", () => {
    expect(changeOf([phq(at(1), 14), phq(at(8), null, { prior_score: 14, change: 3 })])).toMatchObject({ change: 3, basis: "client" });
    expect(changeOf([phq(at(1), 14), phq(at(8), null)])).toBeNull();
  });

  it("follows the latest administration by event time, not the last applied", () => {
    const late = phq(at(1), 10, { prior_score: 2, change: 8 });
    const latest = phq(at(8), 12, { prior_score: 20, change: -8 });
    expect(changeOf([latest, late])).toMatchObject({ prior_score: 10, change: 2, basis: "history" });
  });
});
