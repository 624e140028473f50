import { describe, expect, it } from "vitest";
import { InflightBudget } from "../../../actors/inflight-budget.js";

const settled = async (p: Promise<void>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe("InflightBudget", () => {
  it("has room while the bytes held stay under the limit", async () => {
    const b = new InflightBudget(100);
    expect(await settled(b.room())).toBe(true);
    b.take(99);
    expect(await settled(b.room())).toBe(true);
  });

  it("makes readers wait at the limit, and lets them all go once bytes are given back under it", async () => {
    const b = new InflightBudget(100);
    b.take(60);
    b.take(60);
    const first = b.room();
    const second = b.room();
    expect(await settled(first)).toBe(false);
    b.give(10);
    expect(await settled(first)).toBe(false);
    b.give(20);
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(true);
    expect(b.stats()).toEqual({ bytes: 90, peak_bytes: 120, limit_bytes: 100 });
  });

  it("lets waiters go on release (the engine stopping), room or not", async () => {
    const b = new InflightBudget(10);
    b.take(50);
    const waiting = b.room();
    b.release();
    expect(await settled(waiting)).toBe(true);
  });

  it("never counts below zero", () => {
    const b = new InflightBudget(10);
    b.give(5);
    expect(b.stats().bytes).toBe(0);
  });
});
