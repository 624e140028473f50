import fc from "fast-check";
import type { LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { SAMPLES } from "./samples.js";

/** Random histories for the fold's property tests. */
// Few distinct instants, so equal timestamps (broken by acceptance order) are common.
export const instant = fc.integer({ min: 0, max: 11 }).map((h) => `2025-03-0${1 + (h % 3)}T${String(h * 2).padStart(2, "0")}:00:00Z`);
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

export const logArb = (types: readonly LogType[]) =>
  fc.record({ type: fc.constantFrom(...types), timestamp: instant }).chain(({ type, timestamp }) =>
    (varied[type] ?? fc.constant(SAMPLES[type])).map((payload) => ({ type, timestamp, payload })),
  );

/** Logs with unique ids in acceptance order (the id is the tiebreak for equal timestamps). */
export const logsArb = (types: readonly LogType[], max: number) =>
  fc.array(logArb(types), { maxLength: max }).map((xs) =>
    xs.map((x, i): LogRecord => ({
      id: `log_${String(i).padStart(4, "0")}`, log_type: x.type, organization_id: "o", project_id: "p", patient_id: "pat_1",
      timestamp: x.timestamp, ingested_at: x.timestamp, payload: x.payload,
    })),
  );
