import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { connect, nkeyAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeSecureNatsConfig } from "../../infra/nats/secure-config.js";
import { topologyNames } from "../../infra/nats/topology.js";
import { deleteKeys } from "../../infra/redis/connection.js";
import { eventually, startStack, type TestStack } from "../support/stack.js";

/**
 * `npm start`'s prestart with PSS_SECURE_NATS=1 (infra/scripts/ensure-backends.sh) starts
 * a private nats-server on a free port from the generated configuration; the service
 * runs against it with its own nkey, and a plain NATS client holding a gateway's key
 * tries everything a gateway could.
 */
const ns = `g${randomBytes(5).toString("hex")}`;
const names = topologyNames(ns);
const ORG = "org_default";
const PRJ = "prj_default";
let dataDir: string;
let url: string;
let secureEnv: NodeJS.ProcessEnv;
let t: TestStack;
let pid: string;
const clients: NatsConnection[] = [];

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

async function gateway(scope = "all"): Promise<NatsConnection> {
  const seed = readFileSync(join(dataDir, "nats", "gateways", `${scope}.nk`), "utf8").trim();
  const nc = await connect({ servers: url, authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)), maxReconnectAttempts: 0 });
  clients.push(nc);
  return nc;
}

const envelope = (timestamp: string) => JSON.stringify({ log_type: "user_login", patient_id: pid, timestamp, payload: {} });

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "pss-secure-nats-"));
  const port = await freePort();
  url = `nats://127.0.0.1:${port}`;
  secureEnv = { ...process.env, PSS_SECURE_NATS: "1", NATS_URL: url, DATA_DIR: dataDir, PSS_NAMESPACE: ns };
  // A gateway key for one project, made before the prestart (which keeps it).
  writeSecureNatsConfig({ dir: join(dataDir, "nats"), listen: `127.0.0.1:${port}`, namespace: ns, gateways: [`${ORG}.${PRJ}`] });
  execFileSync("bash", ["infra/scripts/ensure-backends.sh"], { env: secureEnv, stdio: "pipe", timeout: 30_000 });
  t = await startStack({ PSS_SECURE_NATS: "1", NATS_URL: url, DATA_DIR: dataDir, PSS_NAMESPACE: ns });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  const redis = t?.services.redis;
  await t?.close();
  if (redis) await deleteKeys(redis, `${ns}:*`).catch(() => undefined);
  try {
    process.kill(Number(readFileSync(join(dataDir, "nats", "nats-server.pid"), "utf8")), "SIGTERM");
  } catch {
    // never started
  }
  await new Promise((r) => setTimeout(r, 300));
  rmSync(dataDir, { recursive: true, force: true });
});

async function refused(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => null, (e: Error) => e);
  expect(err, "the server should refuse this").not.toBeNull();
  return String(err?.message);
}

describe("NATS with accounts for the service and device gateways (PSS_SECURE_NATS=1)", () => {
  it("lets a gateway publish an envelope on its ingest subject, acknowledged by the stream, and the log lands", async () => {
    const g = await gateway();
    const ack = await jetstream(g).publish(names.ingestSubject(ORG, PRJ), envelope("2026-07-01T08:00:00Z"));
    expect(ack.stream).toBe(names.ingestStream);
    const scoped = await gateway(`${ORG}.${PRJ}`);
    await jetstream(scoped).publish(names.ingestSubject(ORG, PRJ), envelope("2026-07-02T08:00:00Z"));
    const logs: { timestamp: string }[] = await eventually(
      async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs`, headers: t.auth })).json().logs,
      (l) => l.length >= 2,
      10_000,
    );
    expect(logs.map((l) => l.timestamp)).toEqual(["2026-07-02T08:00:00.000Z", "2026-07-01T08:00:00.000Z"]);
  });

  it("refuses a gateway the config bucket, every JetStream API and every other subject", async () => {
    const g = await gateway();
    expect(await refused(new Kvm(g).open(names.buckets.config).then((kv) => kv.get("jwt_secret")))).toMatch(/Permissions Violation/);
    expect(await refused(jetstreamManager(g))).toMatch(/Permissions Violation/);
    expect(await refused(g.request(`$JS.API.STREAM.INFO.${names.logsStream}`, "", { timeout: 1_000 }))).toMatch(/Permissions Violation/);
    expect(await refused(g.request(`$JS.API.DIRECT.GET.KV_${names.buckets.apiKeys}`, "{}", { timeout: 1_000 }))).toMatch(/Permissions Violation/);
    expect(await refused(g.request(`${ns}.engine.clickhouse.query`, JSON.stringify({ sql: "SELECT 1", params: {} }), { timeout: 1_000 }))).toMatch(/Permissions Violation/);
    const js = jetstream(g);
    expect(await refused(js.publish(names.logSubject(ORG, PRJ, pid), JSON.stringify({ logs: [] })))).toMatch(/Permissions Violation/);
    expect(await refused(js.publish(names.deadLetterSubject(ORG, PRJ), "{}"))).toMatch(/Permissions Violation/);
    expect(await refused(js.publish(names.auditSubject(ORG), "{}"))).toMatch(/Permissions Violation/);
    for (const subject of [">", `${ns}.>`, names.logSubject(ORG, PRJ, pid), "$KV.>", "$JS.>"]) {
      const sub = g.subscribe(subject);
      expect(String(await sub.closed), subject).toMatch(/Permissions Violation/);
    }
    // A plain publish (no reply) onto a log subject stores nothing either.
    g.publish(names.logSubject(ORG, PRJ, pid), "{not json");
    await g.flush();
    const last = await t.services.topology.jsm.streams.getMessage(names.logsStream, { last_by_subj: names.logSubject(ORG, PRJ, pid) });
    expect(last?.string()).not.toBe("{not json");
  });

  it("keeps a project's gateway key to that project's ingest subject", async () => {
    const scoped = await gateway(`${ORG}.${PRJ}`);
    expect(await refused(jetstream(scoped).publish(names.ingestSubject(ORG, "prj_other"), envelope("2026-07-03T08:00:00Z")))).toMatch(/Permissions Violation/);
    expect(await refused(jetstream(scoped).publish(names.ingestSubject("org_other", PRJ), envelope("2026-07-03T08:00:00Z")))).toMatch(/Permissions Violation/);
  });

  it("takes a gateway key added or revoked while it runs once the prestart runs again", async () => {
    execFileSync("node", ["--import", "tsx", "infra/scripts/secure-nats.ts", ORG], { env: secureEnv, stdio: "pipe" });
    execFileSync("bash", ["infra/scripts/ensure-backends.sh"], { env: secureEnv, stdio: "pipe", timeout: 30_000 });
    const seedFile = join(dataDir, "nats", "gateways", `${ORG}.nk`);
    const seed = readFileSync(seedFile, "utf8").trim();
    const added = await eventually(() => gateway(ORG).then((g) => g, () => null), (g) => g !== null, 5_000);
    await jetstream(added!).publish(names.ingestSubject(ORG, PRJ), envelope("2026-07-04T08:00:00Z"));
    rmSync(seedFile);
    execFileSync("bash", ["infra/scripts/ensure-backends.sh"], { env: secureEnv, stdio: "pipe", timeout: 30_000 });
    const revoked = await eventually(
      () => connect({ servers: url, authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)), maxReconnectAttempts: 0, reconnect: false }).then(async (c) => (await c.close(), "connected"), (e: Error) => e.message),
      (m) => m !== "connected",
      5_000,
    );
    expect(revoked).toMatch(/Authorization Violation/i);
  });

  it("refuses a client without a key", async () => {
    expect(await refused(connect({ servers: url, maxReconnectAttempts: 0, reconnect: false }))).toMatch(/Authorization Violation/i);
  });
});
