import { describe, expect, it } from "vitest";
import { LOG_TYPES } from "../../../catalog/log-types.js";
import { emptyPatientState, evolvePatient } from "../../../readmodels/patient-state.js";
import { routeLog } from "../../../readmodels/routing.js";
import { at, log } from "./given.js";
import { SAMPLES } from "./samples.js";

/**
 * Routes that only follow the list the log belongs to: adherence lays its dose schedule
 * out again at a medication list change, which on an empty state has nothing to lay out.
 */
const FOLLOWERS: Partial<Record<string, string[]>> = { medication_list_update: ["adherence"] };

describe("every log type", () => {
  it.each(LOG_TYPES.map((t) => [t]))("changes the module it is routed to (%s)", (type) => {
    const { changes } = evolvePatient(emptyPatientState("pat_1"), log(type, at(1), SAMPLES[type]));
    expect(changes.map((c) => c.module_type)).toEqual(routeLog(type).filter((k) => !FOLLOWERS[type]?.includes(k)));
    expect(changes.every((c) => c.op === "created")).toBe(true);
  });

  it("leaves state unchanged, without throwing, for a payload it cannot use", () => {
    for (const type of LOG_TYPES) {
      expect(() => evolvePatient(emptyPatientState("pat_1"), log(type, at(1), { unexpected: [1, { x: null }] })), type).not.toThrow();
    }
  });
});

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

describe("purity", () => {
  it("folds every log type twice over frozen states and logs without mutating them", () => {
    let s = deepFreeze(emptyPatientState("pat_1", "Europe/Paris"));
    for (const round of [1, 2]) {
      for (const [i, type] of LOG_TYPES.entries()) {
        s = deepFreeze(evolvePatient(s, deepFreeze(log(type, at(round, 0, i), SAMPLES[type]))).state);
      }
    }
    expect(s.applied).toBe(110);
    expect(Object.keys(s.stable).length + Object.keys(s.event).length).toBe(27);
  });
});
