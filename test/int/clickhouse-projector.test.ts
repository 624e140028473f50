import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { ClickHouseProjector } from "../../actors/clickhouse-projector.js";
import { encodeRow, insertLogRows } from "../../infra/clickhouse/log-rows.js";
import { MIGRATIONS, migrate } from "../../infra/clickhouse/schema.js";
import { compileLogQuery, pageRows } from "../../query/index.js";
import { mayReadAsNumber } from "../../query/numeric-copy.js";
import fc from "fast-check";

let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

async function rows(sql: string, params: Record<string, unknown> = {}) {
  const r = await t.services.clickhouse.client!.query({ query: sql, query_params: params, format: "JSONEachRow" });
  return r.json<Record<string, unknown>>();
}

describe("the ClickHouse projector", () => {
  it("copies every accepted log into the logs table, once, with its tenancy and payload", async () => {
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const logs = [
      { log_type: "symptom_report", patient_id: pid, timestamp: "2026-08-01T10:00:00Z", trace: { object_type: "visit", object_id: "v9" }, idempotency_key: "ck-1", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }] } },
      { log_type: "user_login", patient_id: pid, timestamp: "2026-08-01T11:00:00Z", payload: {} },
    ];
    const ans = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
    const ns = t.config.namespace;
    const deadline = Date.now() + 5_000;
    let got: Record<string, unknown>[] = [];
    while (Date.now() < deadline) {
      got = await rows(`SELECT id, type, organization_id, project_id, patient_id, trace, trace_type, idempotency_key, toString(timestamp) AS ts, toString(ingested_at) AS ing, stream_seq, payload FROM ${ns}.logs FINAL WHERE patient_id = {p:String} ORDER BY timestamp`, { p: pid });
      if (got.length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(got.map((r) => r.id)).toEqual(ans.results.map((r: any) => r.id));
    expect(got[0]).toMatchObject({ type: "symptom_report", organization_id: "org_default", project_id: "prj_default", trace: "visit:v9", trace_type: "visit", idempotency_key: "ck-1", ts: "2026-08-01 10:00:00.000" });
    expect(JSON.parse(got[0]!.payload as string)).toEqual(logs[0]!.payload);
    // ingested_at is the service's clock (after the event time here); stream_seq the message's.
    expect(String(got[0]!.ing) > String(got[0]!.ts)).toBe(true);
    expect(Number(got[0]!.stream_seq)).toBeGreaterThan(0);
    // The JSON column is built from the payload's numbers only (the text keeps everything).
    const json = await rows(`SELECT toJSONString(payload_json) AS j FROM ${ns}.logs FINAL WHERE id = {id:String}`, { id: ans.results[0].id });
    expect(json[0]!.j).toBe("{}");
    // A redelivered batch inserts again; FINAL still answers one row per log.
    await insertLogRows(t.services.clickhouse.insertRows!, ns, Buffer.from(encodeRow({ ...(logs[1] as any), id: ans.results[1].id, log_type: "user_login", organization_id: "org_default", project_id: "prj_default", ingested_at: "2026-08-01T11:00:00.000Z", timestamp: "2026-08-01T11:00:00.000Z" }, 1)));
    const again = await rows(`SELECT count() AS n FROM ${ns}.logs FINAL WHERE patient_id = {p:String}`, { p: pid });
    expect(Number(again[0]!.n)).toBe(2);
    expect(t.services.projector!.projectedSeq).toBeGreaterThan(0);
  });

  it("copies a backlog in many small batches, one insert at a time, without losing or doubling a log", async () => {
    const client = t.services.clickhouse.client!;
    const db = `${t.config.namespace}_p2`;
    // One message per patient per batch: 12 patients make 12 messages of 3 logs.
    const pids: string[] = [];
    for (let i = 0; i < 12; i++) pids.push((await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id);
    const logs = Array.from({ length: 36 }, (_, i) => ({ log_type: "user_login", patient_id: pids[i % 12], timestamp: new Date(Date.UTC(2026, 7, 2) + i * 1000).toISOString(), payload: {} }));
    expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).statusCode).toBe(200);
    const s = t.services;
    const names = s.topology.names;
    const last = (await s.topology.jsm.streams.info(names.logsStream)).state.last_seq;
    for (const until = Date.now() + 5_000; s.projector!.projectedSeq < last && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    const stored = Number((await rows(`SELECT count() AS n FROM ${t.config.namespace}.logs FINAL`))[0]!.n);
    expect(stored).toBeGreaterThanOrEqual(38);
    await migrate(client, db);
    // batchMax 3, linger 1 ms: the backlog goes in many inserts, each acked after it lands.
    const p = new ClickHouseProjector({ js: s.topology.js, jsm: s.topology.jsm, names, insertRows: s.clickhouse.insertRows!, database: db, redis: s.redis, redisPrefix: `${t.config.namespace}:p2`, log: console }, `${t.config.namespace}_p2`, 3, 1);
    try {
      await p.start();
      const deadline = Date.now() + 10_000;
      while (p.projectedSeq < last && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(p.projectedSeq).toBe(last);
      expect(p.stats.batches).toBeGreaterThanOrEqual(12);
      const [all, distinct] = [await rows(`SELECT count() AS n FROM ${db}.logs`), await rows(`SELECT uniqExact(id) AS n FROM ${db}.logs`)];
      expect([Number(all[0]!.n), Number(distinct[0]!.n)]).toEqual([stored, stored]);
      // The last batch's ack is sent without waiting for JetStream's answer: it lands shortly.
      let info = await s.topology.jsm.consumers.info(names.logsStream, `${t.config.namespace}_p2`);
      for (let i = 0; i < 50 && info.num_ack_pending > 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        info = await s.topology.jsm.consumers.info(names.logsStream, `${t.config.namespace}_p2`);
      }
      expect(info.num_ack_pending).toBe(0);
    } finally {
      await p.stop();
      await s.topology.jsm.consumers.delete(names.logsStream, `${t.config.namespace}_p2`).catch(() => undefined);
      await client.command({ query: `DROP DATABASE IF EXISTS ${db}` });
    }
  });

  it("inserts the logs a killed projector took and never acknowledged, before acknowledging anything newer", async () => {
    const client = t.services.clickhouse.client!;
    const db = `${t.config.namespace}_p3`;
    await migrate(client, db);
    const s = t.services;
    const names = s.topology.names;
    const durable = `${t.config.namespace}_p3`;
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const send = async (day: number) => {
      const logs = Array.from({ length: 5 }, (_, i) => ({ log_type: "user_login", patient_id: pid, timestamp: new Date(Date.UTC(2026, 7, day) + i * 1000).toISOString(), payload: {} }));
      expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).statusCode).toBe(200);
    };
    const deps = { js: s.topology.js, jsm: s.topology.jsm, names, database: db, redis: s.redis, redisPrefix: `${t.config.namespace}:p3`, log: { error: () => undefined } };
    // The first process takes the whole stream but its inserts never land: then it is gone, nothing acknowledged.
    let took = false;
    const dying = new ClickHouseProjector({ ...deps, insertRows: async () => { took = true; throw new Error("killed"); } }, durable, 20_000, 1);
    await dying.start();
    for (const until = Date.now() + 5_000; !took && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    expect(took).toBe(true);
    await dying.stop();
    const before = await s.topology.jsm.consumers.info(names.logsStream, durable);
    expect(before.num_ack_pending).toBeGreaterThan(0);
    // Newer logs arrive; the next process must not acknowledge them past the pending ones.
    await send(20);
    const last = (await s.topology.jsm.streams.info(names.logsStream)).state.last_seq;
    const next = new ClickHouseProjector({ ...deps, insertRows: s.clickhouse.insertRows! }, durable, 20_000, 1);
    try {
      await next.start();
      for (const until = Date.now() + 10_000; next.projectedSeq < last && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      expect(next.projectedSeq).toBe(last);
      for (const until = Date.now() + 5_000; s.projector!.projectedSeq < last && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      // Every log the service's own projector copied, the second process copied too.
      const main = Number((await rows(`SELECT count() AS n FROM ${t.config.namespace}.logs FINAL`))[0]!.n);
      expect(Number((await rows(`SELECT uniqExact(id) AS n FROM ${db}.logs`))[0]!.n)).toBe(main);
    } finally {
      await next.stop();
      await s.topology.jsm.consumers.delete(names.logsStream, durable).catch(() => undefined);
      await client.command({ query: `DROP DATABASE IF EXISTS ${db}` });
    }
  });

  it("keeps in the JSON column's copy every string that ClickHouse reads as a number", async () => {
    // numericCopy drops strings it judges unreadable as numbers; the compiler reads a
    // string at a path with toFloat64OrNull, so a string it drops must read as NULL there.
    const client = t.services.clickhouse.client!;
    const db = `${t.config.namespace}_nc`;
    const units = [..."0123456789..eE+--xX_,:/TZdDfFpPaAnNiIyt \t'\"\\"];
    const strings = [...new Set([
      "1", "1.", ".1", "1e5", "1e", "+.5", "-.5e-3", "1e+", "1_000", "0x1p3", "0b101", "１２", "5%", "infinity", "-INF", "NaN", "2026", "2026-05-01", "08:00",
      ...fc.sample(fc.string({ unit: fc.constantFrom(...units), maxLength: 8 }), { numRuns: 30_000, seed: 7 }),
    ])];
    try {
      await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
      await client.command({ query: `CREATE TABLE ${db}.s (s String) ENGINE = Memory` });
      await client.insert({ table: `${db}.s`, values: strings.map((s) => ({ s })), format: "JSONEachRow" });
      const numbers = (await rows(`SELECT s FROM ${db}.s WHERE toFloat64OrNull(s) IS NOT NULL`)).map((r) => r.s as string);
      expect(numbers.length).toBeGreaterThan(100);
      expect(numbers.filter((s) => !mayReadAsNumber(s))).toEqual([]);
      expect(numbers).toContain("2026");
      expect(numbers).not.toContain("2026-05-01");
    } finally {
      await client.command({ query: `DROP DATABASE IF EXISTS ${db}` });
    }
  });

  it("records applied schema migrations", async () => {
    const m = await rows(`SELECT version FROM ${t.config.namespace}.schema_migrations ORDER BY version`);
    expect(m.map((r) => Number(r.version))).toEqual(MIGRATIONS.map((x) => x.version));
  });

  it("migrates a version-1 database forward: old rows get the JSON column and a trace type, and answer path queries", async () => {
    const client = t.services.clickhouse.client!;
    const db = `${t.config.namespace}_v1`;
    try {
      expect(await migrate(client, db, MIGRATIONS.slice(0, 1))).toEqual([1]);
      // Rows as version 1 stored them: its columns only.
      const log = (id: string, payload: Record<string, unknown>) =>
        ({ id, type: "symptom_report", organization_id: "o", project_id: "p", patient_id: "pat_1", timestamp: "2026-01-01T00:00:00.000Z", ingested_at: "2026-01-01T00:00:00.000Z", trace: "", idempotency_key: "", payload: JSON.stringify(payload), stream_seq: 1 });
      // Traces as version 1 stored them: an object's `type:id`, or a string as sent.
      const traces = ["visit:v9", "plain", ":x", "y:", "a:b:c", ""];
      const traced = traces.map((trace, i) => ({ ...log(`log_t${i}`, {}), trace }));
      await client.insert({ table: `${db}.logs`, values: [log("log_a", { score: 3, note: "x" }), log("log_b", { score: "5", a: { b: null } }), ...traced], format: "JSONEachRow", clickhouse_settings: { date_time_input_format: "best_effort" } });
      expect(await migrate(client, db)).toEqual([2, 3, 4]);
      expect(await migrate(client, db)).toEqual([]);
      const q = compileLogQuery({ aggregations: [{ op: "avg", field: "payload.score", alias: "avg" }, { op: "count", alias: "n" }], filter: [{ field: "payload.score", op: "gte", value: 3 }] }, { organization_id: "o", project_id: "p" });
      expect(q.sql).toContain("payload_json.`score`");
      const got = pageRows(q, await rows(q.sql.replace(/\bFROM logs\b/, `FROM ${db}.logs`), q.params)).rows;
      expect(got).toEqual([{ avg: 4, n: 2 }]);
      // The text stays the answer: the JSON type would have dropped the null.
      const whole = await rows(`SELECT payload, toJSONString(payload_json) AS j FROM ${db}.logs FINAL WHERE id = 'log_b'`);
      expect(whole[0]).toEqual({ payload: '{"score":"5","a":{"b":null}}', j: '{"score":"5"}' });
      // Old rows read a trace type from their text: the part before the first colon when both sides are non-empty.
      const typed = await rows(`SELECT trace, trace_type FROM ${db}.logs FINAL WHERE id LIKE 'log_t%' ORDER BY id`);
      expect(typed.map((r) => r.trace_type)).toEqual(["visit", "", "", "", "a", ""]);
    } finally {
      await client.command({ query: `DROP DATABASE IF EXISTS ${db}` });
    }
  });
});
