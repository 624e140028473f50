import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOG_TYPES, type LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { applyInArrivalOrder, given } from "./given.js";
import { SAMPLES } from "./samples.js";
import { renderView, VIEW_TYPES } from "../../../readmodels/views/index.js";

// Few distinct instants, so equal timestamps (broken by acceptance order) are common.
const instant = fc.integer({ min: 0, max: 11 }).map((h) => `2025-03-0${1 + (h % 3)}T${String(h * 2).padStart(2, "0")}:00:00Z`);
const name = fc.constantFrom("pain", "Nausea", "pain ", "fatigue");
const leaf = fc.oneof(fc.integer({ min: 0, max: 3 }), fc.constant(null), fc.constantFrom("x", "y"));
const ext = fc.dictionary(fc.constantFrom("a", "b"), fc.oneof(leaf, fc.dictionary(fc.constantFrom("c", "d"), leaf, { maxKeys: 2 })), { maxKeys: 2 });

/** Payloads that exercise identity, lifecycle and patch rules; other types use their sample. */
const varied: Partial<Record<LogType, fc.Arbitrary<Record<string, unknown>>>> = {
  symptom_report: fc.record({
    instrument: fc.constantFrom("esas_r", "pro_ctcae"),
    symptoms: fc.array(fc.record({ name, score: fc.integer({ min: 0, max: 4 }), extensions: ext }), { minLength: 1, maxLength: 2 }),
  }),
  symptom_detail: fc.record({ symptom_type: name, detail_type: fc.constantFrom("location", "duration"), response: fc.constantFrom("left", "2 days") }),
  demographics: fc.record({ name: fc.option(fc.constantFrom("Ada", "Grace"), { nil: undefined }), sex: fc.option(fc.constantFrom("female", "other")), extensions: ext }, { requiredKeys: [] }),
  preferences: fc.record({ tone: fc.constantFrom("warm", "brief"), notification_preferences: fc.record({ push: fc.boolean() }, { requiredKeys: [] }) }, { requiredKeys: [] }),
  medication_list_update: fc.record({
    medications: fc.array(fc.record({
      action: fc.constantFrom("add", "update", "delete"), medication_name: fc.constantFrom("Metformin", "metformin ", "Lisinopril"),
      schedule_times: fc.constant(["09:00"]), adherence_window_minutes: fc.constantFrom(15, 60), extensions: ext,
    }), { minLength: 1, maxLength: 2 }),
  }),
  medication_adherence: fc.record({
    medication_adherence: fc.array(fc.record({ status: fc.constantFrom("taken", "skipped"), medication_name: fc.constantFrom("Metformin", "Lisinopril"), scheduled_time: instant }), { minLength: 1, maxLength: 2 }),
  }),
  emergency_contact: fc.record({ name: fc.constantFrom("Jane", "jane ", "Bob"), phone: fc.constantFrom("1", "2"), action: fc.constantFrom("add", "update", "remove") }),
  lab_results: fc.record({ results: fc.array(fc.record({ test_name: fc.constantFrom("Hemoglobin", "hemoglobin"), value_numeric: fc.integer({ min: 5, max: 20 }), unit: fc.constant("g/dL"), reference_range_low: fc.constant(12) }), { minLength: 1, maxLength: 2 }) }),
  activity_data: fc.record({ steps: fc.integer({ min: 0, max: 9000 }), local_date: fc.option(fc.constantFrom("2025-03-01", "2025-03-02"), { nil: undefined }) }, { requiredKeys: ["steps"] }),
  conversation_turn: fc.record({ conversation_id: fc.constantFrom("c1", "c2"), turn_index: fc.integer({ min: 0, max: 3 }), speaker_label: fc.constantFrom("patient", "agent"), text: fc.constantFrom("hi", "ok") }),
  conversation: fc.record({ conversation_id: fc.constantFrom("c1", "c2"), channel: fc.constant("chat") }),
  questionnaire_response: fc.record({ instrument: fc.constant({ instrument_id: "PHQ-9", instrument_type: "validated" }), scores: fc.record({ total_score: fc.integer({ min: 0, max: 27 }) }) }),
};

const logArb = (types: readonly LogType[]) =>
  fc.record({ type: fc.constantFrom(...types), timestamp: instant }).chain(({ type, timestamp }) =>
    (varied[type] ?? fc.constant(SAMPLES[type])).map((payload) => ({ type, timestamp, payload })),
  );

/** Logs with unique ids in acceptance order (the id is the tiebreak for equal timestamps). */
const logsArb = (types: readonly LogType[], max: number) =>
  fc.array(logArb(types), { maxLength: max }).map((xs) =>
    xs.map((x, i): LogRecord => ({
      id: `log_${String(i).padStart(4, "0")}`, log_type: x.type, organization_id: "o", project_id: "p", patient_id: "pat_1",
      timestamp: x.timestamp, ingested_at: x.timestamp, payload: x.payload,
    })),
  );

const permuted = (types: readonly LogType[], max: number) =>
  logsArb(types, max).chain((logs) => fc.tuple(fc.constant(logs), fc.shuffledSubarray(logs, { minLength: logs.length, maxLength: logs.length })));

describe("fold order", () => {
  it("gives byte-identical state for any arrival order once logs are sorted by (timestamp, acceptance)", () => {
    fc.assert(
      fc.property(permuted(LOG_TYPES, 40), ([logs, shuffled]) => {
        expect(JSON.stringify(given(shuffled, "America/New_York"))).toBe(JSON.stringify(given(logs, "America/New_York")));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 300) },
    );
  });

  it("renders the same views, view_id included, for any arrival order (the id hashes the blocks' JSON as rendered)", () => {
    fc.assert(
      fc.property(permuted(LOG_TYPES, 40), ([logs, shuffled]) => {
        const a = given(shuffled, "America/New_York");
        const b = given(logs, "America/New_York");
        for (const t of VIEW_TYPES) expect(renderView(t, a)).toEqual(renderView(t, b));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 100) },
    );
  });

  it("gives the same patch-style profile even applied unsorted, when event times differ", () => {
    const distinct = (logs: LogRecord[]) => logs.map((l, i) => ({ ...l, timestamp: new Date(Date.UTC(2025, 2, 1, 0, (i * 7919) % 600)).toISOString() }));
    fc.assert(
      fc.property(permuted(["demographics", "preferences", "social_determinants"], 12), ([logs, shuffled]) => {
        const byId = new Map(distinct(logs).map((l) => [l.id, l]));
        const sorted = given([...byId.values()]);
        const arrived = applyInArrivalOrder(shuffled.map((l) => byId.get(l.id)!));
        // Same content; key order inside a document may follow arrival, which is not state.
        expect(arrived.stable).toEqual(sorted.stable);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 500) },
    );
  });
});
