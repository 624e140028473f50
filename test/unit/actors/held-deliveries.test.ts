import { afterEach, describe, expect, it } from "vitest";
import { HeldDeliveries } from "../../../actors/held-deliveries.js";

let clock = 0;
let held: HeldDeliveries;
afterEach(() => held.stop());

const delivery = (name: string, log: string[]) => ({ working: () => log.push(name) });

describe("held deliveries kept from their ack wait", () => {
  it("renews only what was held a whole period, each once a period, and never what was released", () => {
    clock = 0;
    held = new HeldDeliveries(20_000, 600_000, () => clock);
    const renewed: string[] = [];
    const a = delivery("a", renewed);
    const b = delivery("b", renewed);
    const c = delivery("c", renewed);
    held.hold(a);
    clock = 5_000;
    held.hold(b);
    clock = 15_000;
    held.hold(c);
    clock = 19_999;
    expect(held.sweep()).toBe(0);
    clock = 25_000;
    // a (held 25 s) and b (20 s) are due; c (10 s) is not.
    expect(held.sweep()).toBe(2);
    expect(renewed).toEqual(["a", "b"]);
    held.release(c);
    clock = 40_000;
    // a and b were renewed at 25 s: not due again until 45 s; c is gone.
    expect(held.sweep()).toBe(0);
    clock = 45_000;
    expect(held.sweep()).toBe(2);
    expect(renewed).toEqual(["a", "b", "a", "b"]);
    expect(held.size).toBe(2);
  });

  it("keeps the sweep's order by renewal, so a delivery held later is not skipped", () => {
    clock = 0;
    held = new HeldDeliveries(10, 1_000, () => clock);
    const renewed: string[] = [];
    held.hold(delivery("old", renewed));
    clock = 10;
    held.sweep();
    const late = delivery("late", renewed);
    clock = 15;
    held.hold(late);
    clock = 20;
    // "old" was renewed at 10 and is due at 20; "late", held at 15, is due at 25.
    expect(held.sweep()).toBe(1);
    clock = 25;
    expect(held.sweep()).toBe(1);
    expect(renewed).toEqual(["old", "old", "late"]);
  });

  it("gives up on a delivery held past the longest hold, so JetStream delivers it again", () => {
    clock = 0;
    held = new HeldDeliveries(10, 35, () => clock);
    const renewed: string[] = [];
    held.hold(delivery("lost", renewed));
    for (clock = 10; clock <= 60; clock += 10) held.sweep();
    // Renewed at 10, 20 and 30; at 40 it had been held 40 ms, past 35: dropped.
    expect(renewed).toEqual(["lost", "lost", "lost"]);
    expect(held.size).toBe(0);
  });

  it("renews on its own timer, and stops renewing once stopped", async () => {
    held = new HeldDeliveries(30);
    const renewed: string[] = [];
    held.hold(delivery("a", renewed));
    await new Promise((r) => setTimeout(r, 130));
    expect(renewed.length).toBeGreaterThanOrEqual(2);
    held.stop();
    const n = renewed.length;
    await new Promise((r) => setTimeout(r, 80));
    expect(renewed.length).toBe(n);
  });
});
