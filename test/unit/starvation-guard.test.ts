import { describe, expect, it } from "vitest";
import { decide, type GuardState } from "../../app/starvation-guard.js";

const idle: GuardState = { idle: true, calmSeconds: 0 };

describe("the supervisor's guard of a worker under SCHED_IDLE", () => {
  it("leaves a worker that runs, even one that waits at times, where it is", () => {
    expect(decide(idle, { ranMs: 500, waitedMs: 400 }).change).toBeNull();
    expect(decide(idle, { ranMs: 0, waitedMs: 0 }).change).toBeNull(); // asleep, not starved
  });

  it("puts a worker that waited most of a second and hardly ran back under the normal policy", () => {
    expect(decide(idle, { ranMs: 3, waitedMs: 990 })).toEqual({ state: { idle: false, calmSeconds: 0 }, change: "demote" });
  });

  it("returns it to SCHED_IDLE only after ten calm seconds in a row", () => {
    let s: GuardState = { idle: false, calmSeconds: 0 };
    for (let i = 0; i < 9; i++) {
      const d = decide(s, { ranMs: 100, waitedMs: 50 });
      expect(d.change).toBeNull();
      s = d.state;
    }
    // A busy second starts the count again.
    s = decide(s, { ranMs: 100, waitedMs: 700 }).state;
    expect(s.calmSeconds).toBe(0);
    for (let i = 0; i < 9; i++) s = decide(s, { ranMs: 100, waitedMs: 10 }).state;
    expect(decide(s, { ranMs: 100, waitedMs: 10 })).toEqual({ state: idle, change: "restore" });
  });
});
