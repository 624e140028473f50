import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOG_TYPES } from "../../../catalog/index.js";
import { emptyPatientState, evolvePatient } from "../../../readmodels/patient-state.js";
import type { LogRecord } from "../../../readmodels/log-record.js";

/**
 * The state engine checks a stored log's envelope (src/logs/stored-message.ts), not its
 * payload against today's catalog: history a looser catalog accepted must still fold. So
 * the fold has to take any payload without throwing, or one odd log would fail its
 * patient's actor on every delivery.
 */
const KEYS = ["symptoms", "score", "name", "value", "unit", "items", "medications", "answers", "results", "status", "date", "dose", "start_date", "end_date", "instrument", "code", "responses", "messages", "summary", "readings", "conditions", "diagnoses", "frequency", "timestamp", "id", "type"];

describe("the fold", () => {
  it("takes a log of any type with any JSON payload without throwing", () => {
    fc.assert(
      fc.property(fc.constantFrom(...LOG_TYPES), fc.array(fc.dictionary(fc.constantFrom(...KEYS), fc.jsonValue({ maxDepth: 3 })), { minLength: 1, maxLength: 3 }), (type, payloads) => {
        let state = emptyPatientState("pat_1", "UTC", null);
        payloads.forEach((payload, i) => {
          const log: LogRecord = { id: `log_0${i}`, log_type: type, organization_id: "org_1", project_id: "prj_1", patient_id: "pat_1", timestamp: `2026-01-0${i + 1}T00:00:00.000Z`, ingested_at: "2026-01-01T00:00:00.000Z", payload: payload as Record<string, unknown> };
          state = evolvePatient(state, log).state;
        });
        expect(state.patient_id).toBe("pat_1");
      }),
      { numRuns: 3_000, seed: 25 },
    );
  });
});
