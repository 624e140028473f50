import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { connectNats } from "../../infra/nats/connection.js";
import { ensureLeaseBucket, LeaseTtlMismatchError, leaseKey, memberKey } from "../../infra/nats/lease-bucket.js";
import { Membership } from "../../infra/nats/membership.js";
import { destroyTopology, topologyNames } from "../../infra/nats/topology.js";
import { freezable, LeaseLog, ownedOnceAndBalanced, owners, stamp, until } from "../support/leases.js";

// Short leases keep the file quick; the margin leaves room for late timers on a busy machine.
const TTL = 1_500;
const MARGIN = 500;
const RESOURCES = Array.from({ length: 16 }, (_, i) => `p.${i}`);

let nc: NatsConnection;
let ns: string;
let kv: KV;
let log: LeaseLog;
let errors: Error[];
const running: Membership[] = [];

beforeAll(async () => {
  nc = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", "lease-test");
});
afterAll(async () => {
  await nc?.close();
});

// A bucket per test: members of one test would otherwise be candidates in the next.
async function freshBucket(ttlMs = TTL): Promise<void> {
  ns = `t${randomBytes(5).toString("hex")}`;
  kv = await ensureLeaseBucket(nc, ns, ttlMs);
  log = new LeaseLog();
  errors = [];
}
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop()));
  await destroyTopology(nc, ns);
});

async function join(id: string, bucket: KV = kv, ttlMs = TTL): Promise<Membership> {
  const m = await Membership.join({ kv: bucket, member: { id, role: "all" }, resources: RESOURCES, ttlMs, safetyMarginMs: (ttlMs * MARGIN) / TTL, ...log.callbacks(id), onError: (e) => errors.push(e) });
  running.push(m);
  return m;
}

async function stop(m: Membership): Promise<void> {
  running.splice(running.indexOf(m), 1);
  await m.stop();
}

const heldBy = (m: Membership) => m.held().map((h) => h.resource).sort();

describe("leases", () => {
  it("shares 16 resources among three members, each owned by exactly one and 5 or 6 apiece, and frees them all on stop", async () => {
    await freshBucket();
    const ms = await Promise.all(["a", "b", "c"].map((id) => join(id)));
    await until(() => ownedOnceAndBalanced(ms, RESOURCES), 3 * TTL, "16 resources owned once and balanced");
    expect(ms.map((m) => m.held().length).sort()).toEqual([5, 5, 6]);
    expect(log.violations()).toEqual([]);
    expect(errors).toEqual([]);

    for (const m of [...ms]) await stop(m);
    for (const r of RESOURCES) expect(await kv.get(leaseKey(r)).then((e) => e?.operation ?? "none")).not.toBe("PUT");
    for (const m of ms) expect(await kv.get(memberKey(m.id)).then((e) => e?.operation ?? "none")).not.toBe("PUT");
    expect(ms.reduce((s, m) => s + m.counters.acquisitions, 0)).toBe(ms.reduce((s, m) => s + m.counters.releases, 0));
    expect(log.events.filter((e) => e.kind === "lost").every((e) => e.reason === "released" || e.reason === "stopped")).toBe(true);
  });

  it("hands a stopped member's resources to the others within a TTL, and gives a rejoining member its share back", async () => {
    await freshBucket();
    const [a, b, c] = await Promise.all(["a", "b", "c"].map((id) => join(id)));
    await until(() => ownedOnceAndBalanced([a!, b!, c!], RESOURCES), 3 * TTL, "balanced among three");
    const left = heldBy(b!);

    await stop(b!);
    const elapsed = await until(() => ownedOnceAndBalanced([a!, c!], RESOURCES), 2 * TTL, "owned by the two left");
    expect(elapsed).toBeLessThan(TTL);
    expect(log.events.filter((e) => e.member === "b" && e.kind === "lost").map((e) => e.reason)).toEqual(left.map(() => "stopped"));

    const b2 = await join("b2");
    await until(() => ownedOnceAndBalanced([a!, b2, c!], RESOURCES), 3 * TTL, "balanced among three again");
    // The rejoiner's leases are new acquisitions: later epochs than any before them.
    const before = Math.max(...log.events.filter((e) => e.member !== "b2" && e.kind === "acquired").map((e) => e.epoch));
    for (const h of b2.held()) expect(h.epoch).toBeGreaterThan(before);
    expect(log.violations()).toEqual([]);
  });

  it("fences off a member cut from NATS before any other can take its leases; the others own them within two TTLs, and it gets its share back after", async () => {
    await freshBucket();
    const cut = freezable(kv);
    const [a, b] = await Promise.all(["a", "b"].map((id) => join(id)));
    const c = await join("c", cut.kv);
    await until(() => ownedOnceAndBalanced([a!, b!, c], RESOURCES), 3 * TTL, "balanced among three");
    const itsShare = heldBy(c);

    cut.freeze();
    const frozenAt = stamp();
    const elapsed = await until(() => ownedOnceAndBalanced([a!, b!], RESOURCES), 2 * TTL + 1_000, "owned by the two in reach");
    expect(elapsed).toBeLessThan(2 * TTL + 1_000);
    expect(c.held()).toEqual([]);
    for (const r of itsShare) expect(c.holds(r)).toBeNull();
    const losses = log.events.filter((e) => e.member === "c" && e.kind === "lost");
    expect(losses.map((e) => e.resource).sort()).toEqual(itsShare);
    expect(losses.every((e) => e.reason === "expired")).toBe(true);
    // At its deadline (its last renewal went before the cut), not found out later.
    for (const l of losses) expect(l.t - frozenAt).toBeLessThan(TTL - MARGIN + 400);
    // Each loss came before the resource's next owner acquired it.
    expect(log.violations()).toEqual([]);

    cut.thaw();
    await until(() => ownedOnceAndBalanced([a!, b!, c], RESOURCES), 4 * TTL, "balanced among three after the cut heals");
    expect(log.violations()).toEqual([]);
    expect(owners([a!, b!, c], RESOURCES).size).toBe(16);
  });

  it("takes a silent member's leases when they lapse, not at the next tick", async () => {
    // Ticks come every TTL/3: a longer TTL than the file's makes a lease taken at a tick
    // (up to 1 s after its lapse) stand out from one taken at its lapse.
    const ttl = 3_000;
    await freshBucket(ttl);
    // When the watch last saw c write each lease key: its lapse is that plus the TTL.
    const seen = new Map<string, number>();
    const watch = await kv.watch({ key: "lease.>" });
    void (async () => {
      for await (const e of watch) if (e.operation === "PUT" && e.json<{ member: string }>().member === "c") seen.set(e.key, stamp());
    })();
    const cut = freezable(kv);
    const a = await join("a", kv, ttl);
    const c = await join("c", cut.kv, ttl);
    await until(() => ownedOnceAndBalanced([a, c], RESOURCES), 3 * ttl, "balanced between two");
    const itsShare = heldBy(c);
    const since = stamp();
    cut.freeze();
    await until(() => a.held().length === 16, 2 * ttl, "all with a");
    watch.stop();
    const late = log.events
      .filter((e) => e.member === "a" && e.kind === "acquired" && e.t > since && itsShare.includes(e.resource))
      .map((e) => e.t - (seen.get(leaseKey(e.resource))! + ttl));
    expect(late.length).toBe(itsShare.length);
    // The server's expiry may run a little after the lapse: a create that finds the key is tried again within 100 ms, then 200.
    expect(Math.max(...late), `ms after each lapse: ${late.map((l) => l.toFixed(0)).join(", ")}`).toBeLessThan(350);
    expect(log.violations()).toEqual([]);
  });

  it("keeps a resource's epochs rising across every owner it has had", async () => {
    await freshBucket();
    const a = await join("a");
    const first = new Map(a.held().map((h) => [h.resource, h.epoch]));
    expect(first.size).toBe(16);
    const b = await join("b");
    await until(() => ownedOnceAndBalanced([a, b], RESOURCES), 3 * TTL, "balanced between two");
    const moved = new Map(b.held().map((h) => [h.resource, h.epoch]));
    expect(moved.size).toBe(8);
    await stop(b);
    await until(() => a.held().length === 16, 2 * TTL, "all back with a");
    for (const h of a.held()) {
      const between = moved.get(h.resource);
      // A resource that never left keeps its epoch; one that went to b and came back has a later one each time.
      if (between === undefined) expect(h.epoch).toBe(first.get(h.resource));
      else expect([first.get(h.resource)! < between, between < h.epoch]).toEqual([true, true]);
    }
    expect(log.violations()).toEqual([]);
  });

  it("refuses to join with a TTL other than the bucket's, and brings an existing bucket to a new TTL", async () => {
    await freshBucket();
    await expect(Membership.join({ kv, member: { id: "x", role: "all" }, resources: RESOURCES, ttlMs: TTL * 2 })).rejects.toBeInstanceOf(LeaseTtlMismatchError);
    const again = await ensureLeaseBucket(nc, ns, TTL * 2);
    expect((await again.status()).ttl).toBe(TTL * 2);
    const info = await (await jetstreamManager(nc)).streams.info(`KV_${topologyNames(ns).leasesBucket}`);
    expect(info.config.max_msgs_per_subject).toBe(1);
    expect(info.config.duplicate_window).toBeLessThanOrEqual(info.config.max_age);
  });
});
