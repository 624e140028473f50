import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOG_TYPES, logTypeInfo, type LogType } from "../../../catalog/index.js";
import { emptyPatientState, evolvePatient } from "../../../readmodels/patient-state.js";
import type { LogRecord } from "../../../readmodels/log-record.js";

/**
 * The state engine checks a stored log's envelope (src/logs/stored-message.ts), not its
 * payload against today's catalog: history a looser catalog accepted must still fold. So
 * the fold has to take any payload without throwing, or one odd log would fail its
 * patient's actor on every delivery.
 */
/** Every property name the catalog's schemas use, at any depth: the fields reducers read. */
function propertyNames(schema: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(schema)) for (const s of schema) propertyNames(s, out);
  else if (typeof schema === "object" && schema !== null) {
    for (const [k, v] of Object.entries(schema)) {
      if (k === "properties" && typeof v === "object" && v !== null) for (const name of Object.keys(v)) out.add(name);
      propertyNames(v, out);
    }
  }
  return out;
}

/** Any JSON, where objects (at the top and inside lists) mostly use the type's own field names. */
function payloadOf(type: LogType): fc.Arbitrary<Record<string, unknown>> {
  const keys = [...propertyNames(logTypeInfo(type).schema, new Set(["name", "value", "status", "id"]))];
  return fc.letrec((tie) => ({
    payload: fc.dictionary(fc.constantFrom(...keys), tie("value"), { maxKeys: 6 }),
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.jsonValue({ maxDepth: 1 }),
      fc.array(tie("payload"), { maxLength: 3 }),
      tie("payload"),
    ),
  })).payload;
}
const logsOfOneType = fc.constantFrom(...LOG_TYPES).chain((type) => fc.tuple(fc.constant(type), fc.array(payloadOf(type), { minLength: 1, maxLength: 3 })));

describe("the fold", () => {
  // Hundreds of generated logs folded: seconds alone, more on a machine busy with the rest of the suite.
  it("takes a log of any type with any JSON payload without throwing", () => {
    fc.assert(
      fc.property(logsOfOneType, ([type, payloads]) => {
        let state = emptyPatientState("pat_1", "UTC", null);
        payloads.forEach((payload, i) => {
          const log: LogRecord = { id: `log_0${i}`, log_type: type, organization_id: "org_1", project_id: "prj_1", patient_id: "pat_1", timestamp: `2026-01-0${i + 1}T00:00:00.000Z`, ingested_at: "2026-01-01T00:00:00.000Z", payload };
          state = evolvePatient(state, log).state;
        });
        expect(state.patient_id).toBe("pat_1");
      }),
      {
        numRuns: 1_500,
        seed: 25,
        // Fields stored as sent and read again by the next log: names that are not text.
        examples: [
          [["care_team", [{ members: [{ role: "nurse", name: 4 }] }, { members: [{ role: "doctor", name: "Ada" }] }]]],
          [["condition", [{ conditions: [{ disease_type: {} }] }]]],
        ],
      },
    );
  }, 120_000);
});
