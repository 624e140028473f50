import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../infra/nats/connection.js";
import { ensureLeaseBucket } from "../../infra/nats/lease-bucket.js";
import { Membership } from "../../infra/nats/membership.js";
import { destroyTopology } from "../../infra/nats/topology.js";
import { LeaseLog, stamp, until } from "../support/leases.js";

const TTL = 1_500;
const MARGIN = 500;
const RESOURCES = Array.from({ length: 8 }, (_, i) => `p.${i}`);
const natsUrl = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

interface ChildEvent {
  t: number;
  kind: "joined" | "acquired" | "lost" | "working" | "stopped";
  resource?: string;
  epoch?: number;
  reason?: string;
}

let nc: NatsConnection;
const ns = `t${randomBytes(5).toString("hex")}`;
let child: ChildProcess | undefined;
let a: Membership | undefined;
const seen: ChildEvent[] = [];
let stderr = "";

beforeAll(async () => {
  nc = await connectNats(natsUrl, "lease-pause-test");
  await ensureLeaseBucket(nc, ns, TTL);
});
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill("SIGCONT");
    child.kill("SIGKILL");
  }
  await a?.stop();
  await destroyTopology(nc, ns);
  await nc?.close();
});

function spawnMember(id: string): ChildProcess {
  const p = spawn(process.execPath, ["--import", "tsx", "test/support/lease-member.ts"], {
    env: { ...process.env, NATS_URL: natsUrl, LEASE_NS: ns, LEASE_ID: id, LEASE_TTL_MS: String(TTL), LEASE_MARGIN_MS: String(MARGIN), LEASE_RESOURCES: RESOURCES.join(",") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  createInterface({ input: p.stdout }).on("line", (line) => seen.push(JSON.parse(line) as ChildEvent));
  p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return p;
}

/** What the child holds now by its own account: acquired and not lost since. */
function childHolds(): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of seen) {
    if (e.kind === "acquired") out.set(e.resource!, e.epoch!);
    if (e.kind === "lost" && out.get(e.resource!) === e.epoch) out.delete(e.resource!);
  }
  return out;
}

describe("a member paused with SIGSTOP", () => {
  it("never works a lease again once its deadline passed: on waking, holds() says no before anything else runs, and the new owner's epoch is higher", { timeout: 60_000 }, async () => {
    child = spawnMember("paused");
    await until(() => childHolds().size === 8, 30_000, `the child holds all 8 (stderr: ${stderr})`);

    const log = new LeaseLog();
    a = await Membership.join({ kv: await ensureLeaseBucket(nc, ns, TTL), member: { id: "awake", role: "all" }, resources: RESOURCES, ttlMs: TTL, safetyMarginMs: MARGIN, ...log.callbacks("awake") });
    await until(() => a!.held().length === 4 && childHolds().size === 4, 3 * TTL, "shared 4 and 4");
    const paused = new Map(childHolds());

    child.kill("SIGSTOP");
    const stoppedAt = stamp();
    await until(() => a!.held().length === 8, 2 * TTL + 1_000, "the awake member holds all 8");
    const takenAt = new Map(log.events.filter((e) => e.kind === "acquired" && e.t > stoppedAt).map((e) => [e.resource, e]));
    expect([...takenAt.keys()].sort()).toEqual([...paused.keys()].sort());
    // Not before the server could have expired the paused member's last renewal.
    for (const e of takenAt.values()) expect(e.t - stoppedAt).toBeGreaterThan(TTL - MARGIN);

    const wokeAt = stamp();
    child.kill("SIGCONT");
    await until(() => [...paused].every(([r, epoch]) => seen.some((e) => e.kind === "lost" && e.resource === r && e.epoch === epoch)), 3 * TTL, "the woken member reports its leases lost");
    for (const [r, epoch] of paused) {
      const lost = seen.find((e) => e.kind === "lost" && e.resource === r && e.epoch === epoch)!;
      expect(lost.reason).toBe("expired");
      // It finds out on waking, after the new owner started: only holds() and the epoch
      // (the fencing token its writes carry) stand between it and a stale write.
      expect(lost.t).toBeGreaterThan(wokeAt);
      expect(takenAt.get(r)!.epoch).toBeGreaterThan(epoch);
      expect(seen.filter((e) => e.kind === "working" && e.resource === r && e.epoch === epoch && e.t > stoppedAt)).toEqual([]);
    }

    // Awake again, it rejoins and gets its share back, with new epochs.
    await until(() => a!.held().length === 4 && childHolds().size === 4, 4 * TTL, "shared 4 and 4 again");
    for (const [r, epoch] of childHolds()) expect(epoch).toBeGreaterThan(takenAt.get(r)?.epoch ?? paused.get(r) ?? 0);
    expect(log.violations()).toEqual([]);

    child.kill("SIGTERM");
    await until(() => seen.some((e) => e.kind === "stopped"), 10_000, "the child stops");
    await until(() => a!.held().length === 8, TTL, "the awake member holds all 8 after the child stopped");
  });
});
