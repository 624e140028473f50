import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LOG_TYPES } from "../../../catalog/log-types.js";
import { stateAt, statesAt, type Horizon } from "../../../readmodels/as-of.js";
import { cmpTime } from "../../../readmodels/lib/time.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import { moduleEntry, replayPatient } from "../../../readmodels/patient-state.js";
import { EVENT_MODULES, STABLE_MODULES } from "../../../readmodels/module.js";
import { canonicalJson, diffStates } from "../../../readmodels/state-diff.js";
import { instant, logsArb } from "./arbitraries.js";

const TZ = "America/New_York";
const base = { patient_id: "pat_1", timezone: TZ, date_of_birth: null };
const runs = (n: number) => ({ numRuns: Number(process.env.FC_RUNS ?? n) });

/**
 * A history as the service stores it: ids in acceptance order, `ingested_at` rising with
 * them (a few logs per instant, so ties occur), event times independent of acceptance, so
 * late logs (accepted after logs with later event times) are common.
 */
const history = logsArb(LOG_TYPES, 40).chain((logs) =>
  fc.array(fc.integer({ min: 0, max: 2 }), { minLength: logs.length, maxLength: logs.length }).map((steps) => {
    let minute = 0;
    return logs.map((l, i): LogRecord => {
      minute += steps[i]!;
      return { ...l, ingested_at: new Date(Date.UTC(2025, 3, 1, 0, minute)).toISOString() };
    });
  }),
);

/** An as_of among the logs' event instants (or between, or none); a known_at among the acceptance instants. */
const horizonOf = (logs: readonly LogRecord[]): fc.Arbitrary<Horizon> =>
  fc.record({
    as_of: fc.option(fc.oneof(instant, fc.constantFrom("2025-03-02T05:30:00.000Z", "2025-01-01T00:00:00Z")), { nil: undefined }),
    known_at: fc.option(logs.length > 0 ? fc.constantFrom(...logs.map((l) => l.ingested_at)) : fc.constant("2025-04-01T00:00:00.000Z"), { nil: undefined }),
  }, { requiredKeys: [] });

const withHorizon = history.chain((logs) => fc.tuple(fc.constant(logs), fc.shuffledSubarray(logs, { minLength: logs.length, maxLength: logs.length }), fc.array(horizonOf(logs), { minLength: 1, maxLength: 4 })));

/** The definition: a fresh replay of exactly the logs within the horizon. */
const fresh = (logs: readonly LogRecord[], h: Horizon) =>
  replayPatient(base.patient_id, TZ, logs.filter((l) => (h.as_of === undefined || cmpTime(l.timestamp, h.as_of) <= 0) && (h.known_at === undefined || cmpTime(l.ingested_at, h.known_at) <= 0)));

describe("state at a horizon", () => {
  it("as_of is a fresh replay of the logs with event time at or before it, whatever order the history is read in", () => {
    fc.assert(
      fc.property(withHorizon, ([logs, shuffled, hs]) => {
        const h = { as_of: hs[0]!.as_of };
        expect(JSON.stringify(stateAt(base, shuffled, h))).toBe(JSON.stringify(fresh(logs, h)));
      }),
      runs(200),
    );
  });

  it("known_at is a fresh fold of the logs accepted by then: a prefix in acceptance order", () => {
    fc.assert(
      fc.property(withHorizon, ([logs, shuffled, hs]) => {
        const known_at = hs[0]!.known_at ?? logs.at(-1)?.ingested_at ?? "2025-04-01T00:00:00.000Z";
        const prefix = logs.slice(0, logs.filter((l) => l.ingested_at <= known_at).length);
        expect(prefix.every((l) => l.ingested_at <= known_at)).toBe(true);
        expect(JSON.stringify(stateAt(base, shuffled, { known_at }))).toBe(JSON.stringify(replayPatient(base.patient_id, TZ, prefix)));
      }),
      runs(200),
    );
  });

  it("several horizons read in one pass each equal their own fresh replay (as_of and known_at combined)", () => {
    fc.assert(
      fc.property(withHorizon, ([logs, shuffled, hs]) => {
        const states = statesAt(base, shuffled, hs);
        hs.forEach((h, i) => expect(JSON.stringify(states[i]), JSON.stringify(h)).toBe(JSON.stringify(fresh(logs, h))));
      }),
      runs(200),
    );
  });
});

describe("diffStates", () => {
  it("lists exactly the modules whose payload differs, with each differing field's values", () => {
    fc.assert(
      fc.property(withHorizon, ([logs, , hs]) => {
        const [a, b] = [fresh(logs, hs[0]!), fresh(logs, hs[1] ?? {})];
        const diff = diffStates(a, b, { valueChars: 1e9, totalChars: 1e9 });
        for (const key of [...STABLE_MODULES, ...EVENT_MODULES]) {
          const pa = moduleEntry(a, key)?.payload;
          const pb = moduleEntry(b, key)?.payload;
          const d = diff.find((m) => m.module_type === key);
          expect(d !== undefined, key).toBe(pa === undefined || pb === undefined ? pa !== pb : canonicalJson(pa) !== canonicalJson(pb));
          for (const f of d?.fields ?? []) {
            expect(canonicalJson(f.before)).toBe(canonicalJson((pa as Record<string, unknown> | undefined)?.[f.field] ?? null));
            expect(canonicalJson(f.after)).toBe(canonicalJson((pb as Record<string, unknown> | undefined)?.[f.field] ?? null));
            expect(canonicalJson(f.before)).not.toBe(canonicalJson(f.after));
          }
        }
        expect(diffStates(b, b)).toEqual([]);
      }),
      runs(150),
    );
  });

  it("summarizes values past the limits by counts of members added and removed", () => {
    const before = { a: [1, 2, 3], o: { x: 1, y: 2 } };
    const after = { a: [2, 3, 4, 5], o: { x: 1, y: 3, z: 0 } };
    const state = (p: unknown) => ({ ...base, stable: {}, applied: 1, event: { symptoms: { module_type: "symptoms", payload: p, created_at: "t", updated_at: "t", clocks: {} } } }) as never;
    const [m] = diffStates(state(before), state(after), { valueChars: 3 });
    expect(m!.fields).toEqual([
      { field: "a", before: null, after: null, summary: { before_members: 3, after_members: 4, added: 2, removed: 1 } },
      { field: "o", before: null, after: null, summary: { before_members: 2, after_members: 3, added: 2, removed: 1 } },
    ]);
  });
});
