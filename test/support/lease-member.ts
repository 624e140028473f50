// One lease member in a process of its own, for tests that pause it with SIGSTOP. Reads
// LEASE_NS, LEASE_ID, LEASE_TTL_MS, LEASE_MARGIN_MS, LEASE_RESOURCES (comma-separated) and
// NATS_URL; prints one JSON line per event: acquired, lost, and `working` each time its
// work loop found a lease good (holds() answered an epoch). SIGTERM stops it gracefully.
import { connectNats } from "../../infra/nats/connection.js";
import { ensureLeaseBucket } from "../../infra/nats/lease-bucket.js";
import { Membership } from "../../infra/nats/membership.js";
import { stamp } from "./leases.js";

const env = (name: string) => {
  const v = process.env[name];
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};
const print = (event: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify({ t: stamp(), ...event })}\n`);

const ttlMs = Number(env("LEASE_TTL_MS"));
const resources = env("LEASE_RESOURCES").split(",");
const nc = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222", "lease-member");
const kv = await ensureLeaseBucket(nc, env("LEASE_NS"), ttlMs);
const member = await Membership.join({
  kv,
  member: { id: env("LEASE_ID"), role: "all" },
  resources,
  ttlMs,
  safetyMarginMs: Number(env("LEASE_MARGIN_MS")),
  onAcquired: (resource, epoch) => print({ kind: "acquired", resource, epoch }),
  onLost: (resource, epoch, reason) => print({ kind: "lost", resource, epoch, reason }),
});
print({ kind: "joined" });

// What an owner does before each write the lease guards.
const work = setInterval(() => {
  for (const r of resources) {
    const epoch = member.holds(r);
    if (epoch !== null) print({ kind: "working", resource: r, epoch });
  }
}, 50);

process.on("SIGTERM", () => {
  clearInterval(work);
  void member
    .stop()
    .then(() => nc.close())
    .then(() => print({ kind: "stopped" }))
    .finally(() => process.exit(0));
});
