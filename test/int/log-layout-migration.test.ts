import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connectNats } from "../../infra/nats/connection.js";
import { ensureTopology, destroyTopology, topologyNames } from "../../infra/nats/topology.js";
import { LOG_LAYOUT_KEY, LogLayoutMismatchError } from "../../infra/nats/log-layout.js";
import { copyLegacyLogs, countAfter, MIGRATED_FROM_HEADER } from "../../infra/nats/legacy-log-copy.js";
import { MigrationStopped, type MigrationOptions } from "../../infra/nats/log-migration.js";
import { acquireOrWait, DEFAULT_LOCK_TIMING, MIGRATION_LOCK_KEY, MigrationLockLost, type MigrationLog } from "../../infra/nats/migration-lock.js";
import { readSubject } from "../../infra/nats/log-history.js";
import { loadConfig } from "../../src/config.js";
import type { PatientLogMessage } from "../../src/logs/log-writer.js";
import { buildLayout1Namespace, type Layout1Namespace } from "../support/layout1-namespace.js";
import { eventually, startStack, type TestStack } from "../support/stack.js";
import { ensureBuilt, startServiceProcess } from "../support/service-process.js";

const quick: Partial<MigrationOptions> = { pollMs: 50, heartbeatMs: 200, staleMs: 1_500, logEveryMs: 200 };
const silent: MigrationLog = { info: () => undefined, warn: () => undefined };
const connections: NatsConnection[] = [];
const namespaces: string[] = [];

async function nats(): Promise<NatsConnection> {
  const nc = await connectNats(loadConfig({ PSS_NAMESPACE: "unused" }));
  connections.push(nc);
  return nc;
}

afterAll(async () => {
  const nc = await nats();
  for (const ns of namespaces) await destroyTopology(nc, ns);
  for (const c of connections) await c.drain().catch(() => undefined);
});

/** Each patient's log ids on the partitioned subjects, in stream order, and the copies' original sequences. */
async function migratedLogs(nc: NatsConnection, ns: string): Promise<{ byPatient: Map<string, string[]>; origins: number[] }> {
  const t = await ensureTopology(nc, ns);
  const byPatient = new Map<string, string[]>();
  const origins: number[] = [];
  const msgs = readSubject(t.js, t.jsm, t.names.logsStream, t.names.partitionedLogSubjects, {
    decode: (data, m) => {
      origins.push(Number(m.headers?.get(MIGRATED_FROM_HEADER)));
      return JSON.parse(new TextDecoder().decode(data)) as PatientLogMessage;
    },
  });
  for await (const m of msgs) {
    expect(m.subject).toBe(t.names.logSubject(m.data.logs[0]!.organization_id, m.data.logs[0]!.project_id, m.data.logs[0]!.patient_id));
    for (const l of m.data.logs) byPatient.set(l.patient_id, [...(byPatient.get(l.patient_id) ?? []), l.id]);
  }
  return { byPatient, origins };
}

/** Every log once, under its patient's partitioned subject, in the order it was stored; nothing left behind. */
async function expectMigrated(nc: NatsConnection, l1: Layout1Namespace): Promise<void> {
  const { byPatient, origins } = await migratedLogs(nc, l1.ns);
  for (const p of l1.patients) expect(byPatient.get(p.id)).toEqual(l1.stored.get(p.id)!.map((l) => l.id));
  expect(origins).toHaveLength(l1.messages);
  expect(origins.every((o, i) => i === 0 || o > origins[i - 1]!)).toBe(true);
  const names = topologyNames(l1.ns);
  const t = await ensureTopology(nc, l1.ns);
  expect(await countAfter(t.jsm, names.logsStream, names.legacyLogSubjects)).toBe(0);
  expect((await t.kv.config.get(LOG_LAYOUT_KEY))?.json()).toMatchObject({ version: 2, partitions: 16 });
  expect((await t.kv.config.get(MIGRATION_LOCK_KEY))?.operation ?? "gone").not.toBe("PUT");
  await expect(t.jsm.consumers.info(names.logsStream, names.legacyStateConsumer)).rejects.toThrow(/consumer not found/);
}

/**
 * A state answer with each log id replaced by its place in its patient's history (the two
 * namespaces gave the same logs different ids), without what differs by acceptance time.
 */
const comparable = (body: unknown, place: Map<string, string>) =>
  JSON.parse(JSON.stringify(body, (k, v: unknown) => (/^(ingested_at|applied_seq|seq)$/.test(k) ? undefined : typeof v === "string" ? (place.get(v) ?? v) : v)));

/** Log id → `patient#index`, for each patient's ids in the order its logs were sent. */
const placesOf = (ids: Iterable<[string, string[]]>) => new Map([...ids].flatMap(([pid, list]) => list.map((id, i) => [id, `${pid}#${i}`] as [string, string])));

async function statesOf(t: TestStack, l1: Layout1Namespace, place: Map<string, string>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const p of l1.patients) {
    for (const path of ["stable", "event-modules"]) {
      const url = `/v1/state/${p.id}/${path}`;
      const r = await eventually(() => t.app.inject({ method: "GET", url, headers: t.auth }), (r) => r.statusCode === 200, 20_000);
      expect(r.statusCode, r.body).toBe(200);
      out[url] = comparable(r.json(), place);
    }
  }
  return out;
}

async function queryCount(t: TestStack, expected: number): Promise<number> {
  const count = () => t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: t.auth, payload: { count: true } }).then((r) => Number(r.json().count));
  return eventually(count, (n) => n === expected, 30_000);
}

describe("migrating a namespace of the first log layout", () => {
  it("on start copies every log to its partitioned subject; states and the log query match a namespace written afresh", async () => {
    const l1 = await buildLayout1Namespace({ patients: 8, logsPerPatient: 80 });
    namespaces.push(l1.ns);
    expect(l1.logs).toBe(640);
    expect(l1.messages).toBeLessThan(l1.logs);

    // The same patients and logs sent through the write path of a new namespace.
    const fresh = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
    let expected: Record<string, unknown>;
    try {
      for (const p of l1.patients) await fresh.services.patients.create(p);
      const ids = new Map<string, string[]>();
      for (const p of l1.patients) {
        const r = await fresh.app.inject({ method: "POST", url: "/v1/logs/batch", headers: fresh.auth, payload: { logs: l1.inputs.get(p.id)! } });
        expect(r.json()).toMatchObject({ accepted: 80, failed: 0 });
        ids.set(p.id, r.json<{ results: { id: string }[] }>().results.map((x) => x.id));
      }
      expected = await statesOf(fresh, l1, placesOf(ids));
      expect(await queryCount(fresh, l1.logs)).toBe(l1.logs);
    } finally {
      await fresh.close();
    }

    const migrated = await startStack({ PSS_NAMESPACE: l1.ns, PSS_VIEW_DEBOUNCE_MS: "10" }, { log: { ...silent, error: () => undefined } });
    try {
      await expectMigrated(migrated.services.nc, l1);
      expect(await statesOf(migrated, l1, placesOf([...l1.stored].map(([pid, logs]) => [pid, logs.map((l) => l.id)])))).toEqual(expected);
      expect(await queryCount(migrated, l1.logs)).toBe(l1.logs);
      // The first layout's projector durable went with the family the projector's tenure replaced.
      const { jsm, names } = migrated.services.topology;
      await expect(jsm.consumers.info(names.logsStream, `${l1.ns}_clickhouse`)).rejects.toThrow(/consumer not found/);
    } finally {
      await migrated.close();
    }
  }, 180_000);

  it("resumes a migration stopped midway (its member gone, its lock left) without losing or repeating a log", async () => {
    const l1 = await buildLayout1Namespace({ patients: 6, logsPerPatient: 100 });
    namespaces.push(l1.ns);
    const crashed = await nats();
    await expect(ensureTopology(crashed, l1.ns, { log: silent, migration: { ...quick, member: "crashed", copyLimit: 70 } })).rejects.toThrow(MigrationStopped);
    const jsm = await jetstreamManager(crashed);
    const names = topologyNames(l1.ns);
    expect(await countAfter(jsm, names.logsStream, names.partitionedLogSubjects)).toBe(70);
    expect(await countAfter(jsm, names.logsStream, names.legacyLogSubjects)).toBe(l1.messages);

    const started = Date.now();
    const took: string[] = [];
    await ensureTopology(await nats(), l1.ns, { log: { info: () => undefined, warn: (_o, m) => took.push(m) }, migration: { ...quick, member: "second" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(quick.staleMs!);
    expect(took.some((m) => m.includes("took the log layout migration over from crashed"))).toBe(true);
    await expectMigrated(crashed, l1);
  }, 60_000);

  it("finishes a migration whose member died after its last copy, with the partition count its copies were made for", async () => {
    const l1 = await buildLayout1Namespace({ patients: 4, logsPerPatient: 30 });
    namespaces.push(l1.ns);
    const nc = await nats();
    const { js, jsm } = { js: jetstream(nc), jsm: await jetstreamManager(nc) };
    // Copied for 8 partitions, originals purged, then the member died: its lock is all that says so.
    const names8 = topologyNames(l1.ns, 8);
    const r = await copyLegacyLogs({ js, jsm, names: names8 }, { window: 32, assertHeld: () => undefined, progress: () => undefined });
    expect(r.copied).toBe(l1.messages);
    await jsm.streams.purge(names8.logsStream, { filter: names8.legacyLogSubjects });
    await jsm.consumers.delete(names8.logsStream, names8.legacyStateConsumer);
    const kv = await new Kvm(nc).open(names8.buckets.config);
    const layout = { version: 2, partitions: 8, created_at: new Date().toISOString() };
    await kv.create(MIGRATION_LOCK_KEY, JSON.stringify({ member: "crashed", started_at: layout.created_at, beat_at: layout.created_at, layout }));

    const t = await ensureTopology(nc, l1.ns, { log: silent, migration: quick });
    expect(t.names.partitions).toBe(8);
    expect((await kv.get(LOG_LAYOUT_KEY))?.json()).toMatchObject({ version: 2, partitions: 8 });
    const { byPatient } = await migratedLogs(nc, l1.ns);
    for (const p of l1.patients) expect(byPatient.get(p.id)).toEqual(l1.stored.get(p.id)!.map((l) => l.id));
  }, 60_000);

  it("two members starting at once: one copies, the other waits for its record", async () => {
    const l1 = await buildLayout1Namespace({ patients: 5, logsPerPatient: 120 });
    namespaces.push(l1.ns);
    const said: Record<"a" | "b", string[]> = { a: [], b: [] };
    const logOf = (m: "a" | "b"): MigrationLog => ({ info: (_o, msg) => said[m].push(msg), warn: (_o, msg) => said[m].push(msg) });
    // Whichever takes the lock holds it until the other has said it waits.
    let open: () => void = () => undefined;
    const gate = new Promise<void>((r) => (open = r));
    const start = async (m: "a" | "b") => ensureTopology(await nats(), l1.ns, { log: logOf(m), migration: { ...quick, member: m, window: 16, beforeCopy: () => gate } });
    const both = Promise.all([start("a"), start("b")]);
    await eventually(async () => [...said.a, ...said.b], (lines) => lines.some((s) => s.startsWith("waiting for ")), 10_000);
    open();
    const [a, b] = await both;
    expect(a.names.partitions).toBe(b.names.partitions);
    const copiers = (["a", "b"] as const).filter((m) => said[m].some((s) => s.startsWith("migrating the log stream to the partitioned layout")));
    expect(copiers).toHaveLength(1);
    const waiter = copiers[0] === "a" ? "b" : "a";
    expect(said[waiter].length).toBeGreaterThan(0);
    expect(said[waiter].every((s) => s.startsWith(`waiting for ${copiers[0]!} to finish`))).toBe(true);
    await expectMigrated(await nats(), l1);
  }, 60_000);
});

describe("the migration lock", () => {
  it("a holder whose lock another member took over stops copying and leaves the migration to it", async () => {
    const ns = `t${randomBytes(5).toString("hex")}`;
    namespaces.push(ns);
    const t = await ensureTopology(await nats(), ns);
    const layout = { version: 2 as const, partitions: 16, created_at: new Date().toISOString() };
    const held = await acquireOrWait(t.kv.config, "slow", layout, { ...DEFAULT_LOCK_TIMING, heartbeatMs: 100 }, async () => false, silent);
    expect(held).not.toBeNull();
    // A waiter that saw no beat for its stale time takes the lock with a revision-checked update.
    const taker = await acquireOrWait(t.kv.config, "taker", layout, { ...DEFAULT_LOCK_TIMING, pollMs: 20, staleMs: 0 }, async () => false, silent);
    expect((await t.kv.config.get(MIGRATION_LOCK_KEY))?.json()).toMatchObject({ member: "taker", layout });
    await eventually(async () => held!.assertHeld.bind(held!), (assert) => {
      try {
        assert();
        return false;
      } catch (err) {
        return err instanceof MigrationLockLost && err.message.includes("taker");
      }
    }, 5_000);
    expect(() => held!.assertHeld()).toThrow(MigrationLockLost);
    // The loser's release leaves the new holder's lock alone.
    await held!.release();
    expect((await t.kv.config.get(MIGRATION_LOCK_KEY))?.json()).toMatchObject({ member: "taker" });
    await taker!.release();
    expect((await t.kv.config.get(MIGRATION_LOCK_KEY))?.operation).not.toBe("PUT");
  });
});

describe("PSS_PARTITIONS against the recorded count", () => {
  it("refuses another count than the namespace's, naming both and what to do; the service exits with code 2", async () => {
    const ns = `t${randomBytes(5).toString("hex")}`;
    namespaces.push(ns);
    const nc = await nats();
    await ensureTopology(nc, ns, { partitions: 16 });
    const err = await ensureTopology(nc, ns, { partitions: 8 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LogLayoutMismatchError);
    expect((err as Error).message).toBe(
      `PSS_PARTITIONS=8, but namespace "${ns}" was created with 16 partitions, and a namespace's partitions are fixed: unset PSS_PARTITIONS (the recorded 16 is used) or set it to 16`,
    );

    ensureBuilt();
    const dataDir = mkdtempSync(join(tmpdir(), "pss-test-"));
    try {
      const svc = startServiceProcess({ PSS_NAMESPACE: ns, PSS_PARTITIONS: "8", DATA_DIR: dataDir, PSS_ADMIN_KEY: `admin-${randomBytes(16).toString("hex")}`, PORT: String(20_000 + Math.floor(Math.random() * 10_000)), LOG_LEVEL: "info" });
      expect(await svc.exited).toBe(2);
      const stderr = svc.other.join("");
      expect(stderr.split("was created with 16 partitions")).toHaveLength(2);
      expect(stderr).not.toMatch(/\n\s+at /);
      // The supervisor stopped instead of starting another worker.
      expect(svc.lines.filter((l) => l.msg === "worker process exited; starting another")).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
