import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOG_TYPES, type LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { applyInArrivalOrder, given } from "./given.js";
import { logsArb } from "./arbitraries.js";
import { renderView, VIEW_TYPES } from "../../../readmodels/views/index.js";

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
