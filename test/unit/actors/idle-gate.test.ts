import { describe, expect, it } from "vitest";
import { IdleGate } from "../../../actors/idle-gate.js";

const turn = () => new Promise((r) => setImmediate(r));

describe("IdleGate", () => {
  it("lets waiters through only when nothing is pending, one per turn of the event loop", async () => {
    const gate = new IdleGate();
    gate.enter(2);
    const passed: number[] = [];
    for (const i of [1, 2, 3]) gate.park({}, () => passed.push(i));
    await turn();
    await turn();
    expect(passed).toEqual([]);
    gate.leave();
    await turn();
    expect(passed).toEqual([]);
    gate.leave();
    await turn();
    expect(passed).toEqual([1]);
    await turn();
    expect(passed).toEqual([1, 2]);
    // Work that arrives holds back the rest again.
    gate.enter();
    await turn();
    await turn();
    expect(passed).toEqual([1, 2]);
    gate.leave();
    await turn();
    expect(passed).toEqual([1, 2, 3]);
  });

  it("calls a parked key's callback once the engine is idle, and never one unparked before", async () => {
    const gate = new IdleGate();
    gate.enter();
    const called: string[] = [];
    const a = {};
    const b = {};
    gate.park(a, () => called.push("a"));
    gate.park(b, () => called.push("b"));
    gate.unpark(a);
    gate.leave();
    await turn();
    await turn();
    expect(called).toEqual(["b"]);
  });
});
