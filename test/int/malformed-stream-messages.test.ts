import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startStack, type TestStack } from "../support/stack.js";
import { connectNats } from "../../infra/nats/connection.js";
import { clickhouseRpcSubjects, queryClickHouseRpc, serveClickHouseRpc } from "../../infra/clickhouse/rpc.js";

/**
 * Messages published straight onto the service's own subjects, as a client holding a
 * NATS credential could: every reader of those streams must skip (and the state engine
 * park) what the service did not write, and keep serving everything else.
 */
let t: TestStack;
let pid: string;
const ORG = "org_default";
const PRJ = "prj_default";
const encoder = new TextEncoder();

beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const publishRaw = (subject: string, body: unknown) =>
  t.services.topology.js.publish(subject, typeof body === "string" ? encoder.encode(body) : encoder.encode(JSON.stringify(body)));

const login = (timestamp: string) => ({ log_type: "user_login", patient_id: pid, timestamp, payload: {} });
const get = (url: string) => t.app.inject({ method: "GET", url, headers: t.auth });

/** Stored logs a writer other than the service could put on a patient's subject. */
function forgedLogMessages(patientId: string): unknown[] {
  const stored = { id: "log_01JZZZZZZZZZZZZZZZZZZZZZZZ", log_type: "user_login", organization_id: ORG, project_id: PRJ, patient_id: patientId, timestamp: "2026-05-01T00:00:00.000Z", ingested_at: "2026-05-01T00:00:00.000Z", payload: {} };
  return [
    "{not json",
    "null",
    { x: 1 },
    { logs: "many" },
    { logs: [{ garbage: true }] },
    { logs: [{ ...stored, timestamp: 5 }] },
    { logs: [{ ...stored, log_type: "no_such_type" }] },
    { logs: [{ ...stored, payload: "text" }] },
    { logs: [{ ...stored, trace: { object_type: 1 } }] },
    // A well-formed log of another patient, project or organization than its subject names.
    { logs: [{ ...stored, patient_id: "pat_other" }] },
    { logs: [{ ...stored, organization_id: "org_other" }] },
  ];
}

describe("a patient's log subject with messages the service did not write", () => {
  it("keeps answering /logs, /events and state reads with the patient's real logs", async () => {
    const first = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [login("2026-05-02T00:00:00Z")] } });
    expect(first.json().accepted).toBe(1);
    const { names } = t.services.topology;
    for (const body of forgedLogMessages(pid)) await publishRaw(names.logSubject(ORG, PRJ, pid), body);
    const second = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [login("2026-05-03T00:00:00Z")] } });
    expect(second.json().accepted).toBe(1);

    const logs = await get(`/v1/state/${pid}/logs`);
    expect(logs.statusCode).toBe(200);
    expect(logs.json().logs.map((l: { timestamp: string }) => l.timestamp)).toEqual(["2026-05-03T00:00:00.000Z", "2026-05-02T00:00:00.000Z"]);
    const started = Date.now();
    const events = await get(`/v1/state/${pid}/events`);
    expect(events.statusCode).toBe(200);
    expect(events.headers["x-pss-stale"]).toBeUndefined();
    expect(events.json().events).toHaveLength(2);
    const stable = await get(`/v1/state/${pid}/stable`);
    expect(stable.statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("parks each such message once in the project's dead letters, and the engine never fails over them", async () => {
    const { engine } = t.services;
    const parked = await eventually(
      async () => (await get("/v1/dead-letters?limit=500")).json().dead_letters.filter((d: { reason: string }) => d.reason === "unreadable_log_message"),
      (d: { subject: string; message: unknown; errors: { message: string }[] }[]) => d.length >= forgedLogMessages(pid).length,
    );
    expect(parked).toHaveLength(forgedLogMessages(pid).length);
    expect(parked[0]).toMatchObject({ subject: t.services.topology.names.logSubject(ORG, PRJ, pid), message: "{not json" });
    expect(parked[0]?.errors[0]?.message).toMatch(/not JSON/);
    // Parked once: nothing is redelivered and parked again, nothing fails.
    await new Promise((r) => setTimeout(r, 2_500));
    const again = (await get("/v1/dead-letters?limit=500")).json().dead_letters.filter((d: { reason: string }) => d.reason === "unreadable_log_message");
    expect(again).toHaveLength(parked.length);
    expect(engine!.stats.failures).toBe(0);
  });

  it("rebuilds the patient from its log without the parked messages when Redis lost its state", async () => {
    await t.services.redis.del(await t.services.redis.keys(`${t.config.namespace}:*${pid}*`));
    const events = await eventually(
      () => get(`/v1/state/${pid}/events`),
      (r) => r.statusCode === 200 && r.json().events?.length === 2,
    );
    expect(events.statusCode).toBe(200);
    const ids = (await get(`/v1/state/${pid}/logs?order=asc`)).json().logs.map((l: { id: string }) => l.id);
    expect(events.json().events.map((e: { source_event_log_id: string }) => e.source_event_log_id)).toEqual(ids);
    expect(t.services.engine!.stats.failures).toBe(0);
  });
});

describe("the project's dead letters with a letter the service did not write", () => {
  it("lists every letter, the forged ones as unreadable, instead of failing", async () => {
    const { names } = t.services.topology;
    await publishRaw(names.deadLetterSubject(ORG, PRJ), "\u0000 not a letter");
    await publishRaw(names.deadLetterSubject(ORG, PRJ), { reason: 42, errors: "none" });
    // A letter of the right form whose message nests deeper than JSON.stringify can go.
    const deep = `{"received_at":"2026-01-01T00:00:00Z","subject":"s","reason":"invalid_logs","errors":[],"message":${"[".repeat(5_000)}${"]".repeat(5_000)}}`;
    await publishRaw(names.deadLetterSubject(ORG, PRJ), deep);
    const r = await get("/v1/dead-letters?limit=500");
    expect(r.statusCode).toBe(200);
    const forged = r.json().dead_letters.filter((d: { reason: string }) => d.reason === "unreadable_letter");
    expect(forged).toHaveLength(3);
    expect(forged[2].errors[0].message).toMatch(/deeper than 1000 levels/);
    expect(forged[0].message).toBe("\u0000 not a letter");
  });
});

describe("the organization's audit trail with an entry the service did not write", () => {
  it("answers the real entries and skips the forged ones", async () => {
    const { names } = t.services.topology;
    await get("/v1/patients");
    await publishRaw(names.auditSubject(ORG), "not an entry");
    await publishRaw(names.auditSubject(ORG), { at: 7, patient_ids: "x" });
    await publishRaw(names.auditSubject(ORG), { at: "2026-01-01T00:00:00Z", organization_id: ORG });
    await get("/v1/patients");
    const r = await eventually(
      () => get("/v1/audit?limit=1000"),
      (x) => x.statusCode !== 200 || x.json().entries.filter((e: { route: string }) => e.route === "/v1/patients").length >= 2,
    );
    expect(r.statusCode).toBe(200);
    for (const e of r.json().entries) expect(typeof e.request_id).toBe("string");
    const filtered = await get(`/v1/audit?patient_id=${pid}`);
    expect(filtered.statusCode).toBe(200);
  });
});

describe("the service's request subjects with a message that is not JSON", () => {
  it("keep the process's NATS connection serving: the ingestion control subject", async () => {
    // The subject of the jobs lease's current tenure, which this process's runner answers.
    const subject = await t.services.ingestion.runnerSubject();
    expect(subject).toMatch(new RegExp(`^${t.config.namespace}\\.ingestion\\.control\\.\\d+$`));
    t.services.nc.publish(subject!, "{not json");
    t.services.nc.publish(subject!, "null");
    await t.services.nc.flush();
    const started = Date.now();
    const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [login("2026-05-04T00:00:00Z")] } });
    expect(r.statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("keep the process's NATS connection serving: the embedded ClickHouse's query subject", async () => {
    const server = await connectNats(t.config.natsUrl);
    const client = await connectNats(t.config.natsUrl);
    try {
      serveClickHouseRpc(server, t.config.namespace, t.services.clickhouse.client!);
      await server.flush();
      client.publish(clickhouseRpcSubjects(t.config.namespace).query, "{not json");
      const bad = await client.request(clickhouseRpcSubjects(t.config.namespace).query, "null", { timeout: 2_000 });
      expect(bad.json()).toMatchObject({ ok: false });
      expect(await queryClickHouseRpc(client, t.config.namespace, { sql: "SELECT 1 AS one", params: {} }, 2_000)).toEqual([{ one: 1 }]);
    } finally {
      await server.close();
      await client.close();
    }
  });
});
