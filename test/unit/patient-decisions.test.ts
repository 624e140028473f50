import { describe, expect, it } from "vitest";
import { batchNeedsReplay, loadPlan } from "../../actors/patient-decisions.js";
import { MODEL_FINGERPRINT } from "../../infra/redis/state-store.js";
import { emptyStored } from "../../src/state/apply-logs.js";

const stored = (fingerprint = MODEL_FINGERPRINT) => ({ ...emptyStored("pat_a", "UTC", "org", "prj"), applied_seq: 7, fingerprint });

describe("a patient's load plan", () => {
  it("uses a state stored under the current fingerprint", () => {
    const s = stored();
    expect(loadPlan(s, { forced: false, firstQueuedSeq: 8 })).toEqual({ kind: "use", stored: s });
  });

  it("compiles the history again for a state of other reducers or layout", () => {
    expect(loadPlan(stored("layout:0"), { forced: false, firstQueuedSeq: 8 })).toEqual({ kind: "replay" });
  });

  it("compiles the history again after a failed actor, whatever Redis holds", () => {
    expect(loadPlan(stored(), { forced: true, firstQueuedSeq: 8 })).toEqual({ kind: "replay" });
    expect(loadPlan(null, { forced: true, firstQueuedSeq: 8 })).toEqual({ kind: "replay" });
  });

  it("starts a patient with nothing stored empty only if its first stored message is the one waiting", () => {
    expect(loadPlan(null, { forced: false, firstQueuedSeq: 8 })).toEqual({ kind: "new-if-first" });
  });

  it("compiles a patient with nothing stored and nothing waiting (a read asked) from its history", () => {
    expect(loadPlan(null, { forced: false, firstQueuedSeq: null })).toEqual({ kind: "replay" });
  });
});

describe("a batch folded on the state", () => {
  const batch = (...redelivered: boolean[]) => redelivered.map((r) => ({ redelivered: r }));

  it("is saved as folded when in order and delivered once", () => {
    expect(batchNeedsReplay({ late: false }, batch(false, false))).toBe(false);
  });

  it("gives way to the whole history for a late log", () => {
    expect(batchNeedsReplay({ late: true }, batch(false))).toBe(true);
  });

  it("gives way to the whole history when any message came again", () => {
    expect(batchNeedsReplay({ late: false }, batch(false, true))).toBe(true);
  });
});
