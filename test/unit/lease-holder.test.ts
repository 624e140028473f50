import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { JetStreamApiError } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { leaseKey } from "../../infra/nats/lease-bucket.js";
import { LeaseHolder, type LossReason } from "../../infra/nats/leases.js";

const TTL = 3_000;
const MARGIN = 600;

const conflict = (last: number) => new JetStreamApiError({ code: 400, err_code: 10071, description: `wrong last sequence: ${last}` });

/** A one-bucket KV with JetStream's compare-and-set answers; `lostReplies` makes writes land but never answer. */
class FakeKv {
  private seq = 0;
  readonly keys = new Map<string, { revision: number; operation: "PUT" | "DEL"; value: string }>();
  lostReplies = false;

  private write(key: string, operation: "PUT" | "DEL", value: string): Promise<number> {
    const revision = ++this.seq;
    this.keys.set(key, { revision, operation, value });
    return this.lostReplies ? new Promise(() => {}) : Promise.resolve(revision);
  }
  create(key: string, value: string): Promise<number> {
    const cur = this.keys.get(key);
    return cur?.operation === "PUT" ? Promise.reject(conflict(cur.revision)) : this.write(key, "PUT", value);
  }
  update(key: string, value: string, revision: number): Promise<number> {
    const cur = this.keys.get(key);
    return cur?.revision !== revision ? Promise.reject(conflict(cur?.revision ?? 0)) : this.write(key, "PUT", value);
  }
  async delete(key: string, opts?: { previousSeq?: number }): Promise<void> {
    const cur = this.keys.get(key);
    if (opts?.previousSeq !== undefined && cur?.revision !== opts.previousSeq) throw conflict(cur?.revision ?? 0);
    await this.write(key, "DEL", "");
  }
  get(key: string) {
    const cur = this.keys.get(key);
    return Promise.resolve(cur ? { revision: cur.revision, operation: cur.operation, length: cur.value.length, json: <T>() => JSON.parse(cur.value) as T } : null);
  }
  /** The server dropped the key (its TTL passed). */
  expire(key: string): void {
    this.keys.delete(key);
  }
}

let kv: FakeKv;
let events: { kind: string; resource: string; epoch: number; reason?: LossReason }[];
let errors: Error[];

function holder(callbacks: Partial<{ onAcquired: (r: string, e: number) => void | Promise<void>; onLost: (r: string, e: number, reason: LossReason) => void | Promise<void> }> = {}) {
  return new LeaseHolder(kv as unknown as KV, "me", { ttlMs: TTL, safetyMarginMs: MARGIN }, {
    onAcquired: (resource, epoch) => {
      events.push({ kind: "acquired", resource, epoch });
      return callbacks.onAcquired?.(resource, epoch);
    },
    onLost: (resource, epoch, reason) => {
      events.push({ kind: "lost", resource, epoch, reason });
      return callbacks.onLost?.(resource, epoch, reason);
    },
    onError: (e) => errors.push(e),
  }, () => Date.now());
}

beforeEach(() => {
  vi.useFakeTimers();
  kv = new FakeKv();
  events = [];
  errors = [];
});
afterEach(() => {
  vi.useRealTimers();
});

describe("LeaseHolder", () => {
  it("takes the create's revision as the epoch, and refuses a lease another member holds", async () => {
    await kv.create(leaseKey("p.1"), JSON.stringify({ member: "other", epoch: 0 }));
    const h = holder();
    expect(await h.acquire("p.0")).toBe(2);
    expect(await h.acquire("p.1")).toBeNull();
    expect(h.holds("p.0")).toBe(2);
    expect(errors).toEqual([]);
  });

  it("counts a lease lost at its deadline when renewals get no answer, before the server could expire it", async () => {
    const h = holder();
    await h.acquire("p.0");
    kv.lostReplies = true;
    for (let t = 0; t < TTL - MARGIN - 100; t += 1_000) {
      h.renewAll();
      await vi.advanceTimersByTimeAsync(Math.min(1_000, TTL - MARGIN - 100 - t));
    }
    expect(h.holds("p.0")).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(h.holds("p.0")).toBeNull();
    expect(events.at(-1)).toEqual({ kind: "lost", resource: "p.0", epoch: 1, reason: "expired" });
  });

  it("answers holds() from the clock alone, so a process waking past its deadline learns it before any timer runs", async () => {
    const h = holder();
    await h.acquire("p.0");
    // Moves the clock without running timers, as a paused process sees it on waking.
    vi.setSystemTime(Date.now() + TTL);
    expect(h.holds("p.0")).toBeNull();
    expect(events.at(-1)?.reason).toBe("expired");
  });

  it("keeps a lease whose renewal landed but whose answer was lost: the next compare-and-set fails, and the key is found still ours", async () => {
    const h = holder();
    await h.acquire("p.0");
    kv.lostReplies = true;
    h.renewAll();
    await vi.advanceTimersByTimeAsync(1_000);
    kv.lostReplies = false;
    h.renewAll();
    await vi.advanceTimersByTimeAsync(10);
    h.renewAll();
    await vi.advanceTimersByTimeAsync(10);
    expect(h.holds("p.0")).toBe(1);
    expect(events.filter((e) => e.kind === "lost")).toEqual([]);
    expect(h.counters.renewFailures).toBe(2);
  });

  it("counts a lease taken when a renewal finds another member's key", async () => {
    const h = holder();
    await h.acquire("p.0");
    kv.expire(leaseKey("p.0"));
    await kv.create(leaseKey("p.0"), JSON.stringify({ member: "other", epoch: 0 }));
    h.renewAll();
    await vi.advanceTimersByTimeAsync(10);
    expect(h.holds("p.0")).toBeNull();
    expect(events.at(-1)).toEqual({ kind: "lost", resource: "p.0", epoch: 1, reason: "taken" });
    expect(h.counters.losses).toBe(1);
  });

  it("counts a lease taken when the watch shows another member's write after its acquisition, and ignores older entries", async () => {
    const h = holder();
    await h.acquire("p.0");
    h.observe("p.0", 0, { member: "other", epoch: 0 });
    h.observe("p.0", 1, { member: "me", epoch: 0 });
    expect(h.holds("p.0")).toBe(1);
    h.observe("p.0", 7, null);
    expect(h.holds("p.0")).toBeNull();
  });

  it("releases after onLost has finished, so the next owner starts after this one stopped", async () => {
    let finish!: () => void;
    const h = holder({ onLost: () => new Promise<void>((r) => (finish = r)) });
    await h.acquire("p.0");
    const released = h.release("p.0", "released");
    await vi.advanceTimersByTimeAsync(10);
    expect(kv.keys.get(leaseKey("p.0"))?.operation).toBe("PUT");
    expect(h.holds("p.0")).toBe(1);
    finish();
    await released;
    expect(kv.keys.get(leaseKey("p.0"))?.operation).toBe("DEL");
    expect(h.held()).toEqual([]);
    expect(h.counters).toMatchObject({ acquisitions: 1, releases: 1, losses: 0 });
  });

  it("gives a lease back when onAcquired fails", async () => {
    const h = holder({ onAcquired: () => Promise.reject(new Error("could not start")) });
    expect(await h.acquire("p.0")).toBeNull();
    expect(kv.keys.get(leaseKey("p.0"))?.operation).toBe("DEL");
    expect(errors.map((e) => e.message)).toEqual(["could not start"]);
    expect(events.map((e) => e.kind)).toEqual(["acquired", "lost"]);
  });
});
