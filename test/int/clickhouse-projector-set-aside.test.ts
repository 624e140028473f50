import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { ClickHouseProjector } from "../../actors/clickhouse-projector.js";
import type { InsertEncodedRows } from "../../infra/clickhouse/client.js";
import { migrate } from "../../infra/clickhouse/schema.js";
import { newId } from "../../src/ids.js";

/**
 * Logs the log query's ClickHouse store refuses: stored before the edge refused lone
 * surrogates (ClickHouse fails the whole insert over one), or written onto a log subject
 * by another NATS client. None may stop the projector.
 */
let t: TestStack;
let pid: string;
const ORG = "org_default";
const PRJ = "prj_default";
const SECRET = "SECRET-PAYLOAD-TEXT";
const encoder = new TextEncoder();

beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rows(sql: string): Promise<Record<string, unknown>[]> {
  return (await t.services.clickhouse.client!.query({ query: sql, format: "JSONEachRow" })).json();
}

/** A log as the write path stored it before lone surrogates were refused at the edge. */
function stored(over: Record<string, unknown>) {
  return { id: newId("log"), log_type: "user_login", organization_id: ORG, project_id: PRJ, patient_id: pid, timestamp: "2026-04-01T00:00:00.000Z", ingested_at: "2026-04-01T00:00:00.000Z", payload: { note: SECRET }, ...over };
}

const publishLogs = (logs: unknown[]) => t.services.topology.js.publish(t.services.topology.names.logSubject(ORG, PRJ, pid), encoder.encode(JSON.stringify({ logs })));

async function sendValid(n: number, day: number): Promise<void> {
  const logs = Array.from({ length: n }, (_, i) => ({ log_type: "user_login", patient_id: pid, timestamp: new Date(Date.UTC(2026, 3, day) + i * 1000).toISOString(), payload: {} }));
  expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json().accepted).toBe(n);
}

/** A projector of its own (database, durable), copying the whole stream; its log lines are kept. */
async function privateProjector(name: string, insertRows: InsertEncodedRows) {
  const s = t.services;
  const db = `${t.config.namespace}_${name}`;
  await migrate(s.clickhouse.client!, db);
  const lines: unknown[] = [];
  const log = { error: (obj: unknown, msg?: string) => lines.push([obj, msg]) };
  const p = new ClickHouseProjector({ js: s.topology.js, jsm: s.topology.jsm, names: s.topology.names, insertRows, database: db, redis: s.redis, redisPrefix: `${t.config.namespace}:${name}`, log }, `${t.config.namespace}_${name}`, 20_000, 1);
  await p.start();
  return {
    p,
    db,
    lines,
    async until(ok: () => boolean, ms = 10_000) {
      for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await sleep(20);
    },
    async close() {
      await p.stop();
      await s.topology.jsm.consumers.delete(s.topology.names.logsStream, `${t.config.namespace}_${name}`).catch(() => undefined);
      await s.clickhouse.client!.command({ query: `DROP DATABASE IF EXISTS ${db}` });
    },
  };
}

const lastSeq = async () => (await t.services.topology.jsm.streams.info(t.services.topology.names.logsStream)).state.last_seq;

describe("the ClickHouse projector and logs ClickHouse refuses", () => {
  it("sets aside each log ClickHouse refuses in its project's dead letters, once, and copies every other log", async () => {
    await sendValid(3, 1);
    // JSON.parse, as a body's "\ud800" escape arrives: half a character in a trace, a key, a trace object.
    const lone = JSON.parse('"a\\ud800b"') as string;
    const bad = [stored({ trace: lone }), stored({ idempotency_key: `key-${lone}` }), stored({ trace: { object_type: "visit", object_id: lone } })];
    await publishLogs([bad[0]]);
    await publishLogs([stored({}), bad[1], stored({}), bad[2], stored({})]);
    await sendValid(2, 2);
    const last = await lastSeq();
    let inserts = 0;
    const real = t.services.clickhouse.insertRows!;
    const x = await privateProjector("aside", async (...args) => {
      inserts++;
      await real(...args);
    });
    try {
      await x.until(() => x.p.projectedSeq >= last);
      expect(x.p.projectedSeq).toBe(last);
      const ids = (await rows(`SELECT id FROM ${x.db}.logs FINAL`)).map((r) => r.id);
      expect(ids).toHaveLength(3 + 3 + 2);
      for (const b of bad) expect(ids).not.toContain(b.id);
      expect(x.p.stats.set_aside).toBe(3);
      // Cut in halves down to the bad rows: a bounded number of inserts, never a retry loop.
      expect(inserts).toBeLessThan(40);
    } finally {
      await x.close();
    }
    const letters = (await t.app.inject({ method: "GET", url: "/v1/dead-letters?limit=500", headers: t.auth })).json().dead_letters.filter((d: { reason: string }) => d.reason === "not_queryable");
    // One letter per log, though the service's own projector set them aside too.
    expect(letters.map((l: { message: { log_id: string } }) => l.message.log_id).sort()).toEqual(bad.map((b) => b.id).sort());
    expect(letters[0].message).toMatchObject({ organization_id: ORG, project_id: PRJ, patient_id: pid, log_type: "user_login" });
    expect(letters[0].errors[0].message).toMatch(/is stored and in its patient's state, but the log query cannot hold it \(CANNOT_PARSE_ESCAPE_SEQUENCE\)/);
    // The log lines name our own ids and the error class, never patient ids, keys or payload text.
    const text = JSON.stringify(x.lines);
    expect(text).toContain(bad[0]!.id);
    for (const phi of [pid, SECRET, "key-", "visit"]) expect(text).not.toContain(phi);
  });

  it("waits out a ClickHouse that takes no insert, or takes only empty ones, setting nothing aside, then copies everything", async () => {
    await sendValid(4, 3);
    const last = await lastSeq();
    const real = t.services.clickhouse.insertRows!;
    let mode: "down" | "refusing" | "up" = "down";
    const x = await privateProjector("outage", async (table, columns, data, settings) => {
      // Down: nothing goes in. Refusing (a full disk): an empty insert goes, no rows do, and ClickHouse names none.
      if (mode === "down" || (mode === "refusing" && data.length > 0)) throw new Error("Code: 243. DB::Exception: Cannot reserve 1.00 MiB, not enough space. (NOT_ENOUGH_SPACE)");
      await real(table, columns, data, settings);
    });
    try {
      await sleep(2_200);
      mode = "refusing";
      await sleep(2_200);
      expect(x.p.projectedSeq).toBe(0);
      expect(x.p.stats.set_aside).toBe(0);
      expect(x.p.stats.insert_failures).toBeGreaterThanOrEqual(3);
      mode = "up";
      await x.until(() => x.p.projectedSeq >= last);
      expect(x.p.projectedSeq).toBe(last);
      expect(x.p.stats.set_aside).toBe(3);
      // One line for the outage (a line a minute at most), without rows.
      expect(x.lines.filter((l) => (l as [unknown, string])[1].startsWith("clickhouse insert failed"))).toHaveLength(1);
    } finally {
      await x.close();
    }
  });

  it("passes over messages on a log subject that the service did not write, and keeps copying", async () => {
    const { js, names } = t.services.topology;
    for (const body of ["{not json", "null", JSON.stringify({ logs: "many" }), JSON.stringify({ logs: [stored({ organization_id: "org_other" })] })]) {
      await js.publish(names.logSubject(ORG, PRJ, pid), encoder.encode(body));
    }
    await sendValid(2, 4);
    const last = await lastSeq();
    const x = await privateProjector("skip", t.services.clickhouse.insertRows!);
    try {
      await x.until(() => x.p.projectedSeq >= last);
      expect(x.p.projectedSeq).toBe(last);
      expect(x.p.stats.skipped).toBe(4);
    } finally {
      await x.close();
    }
    // The service's own projector went past them too.
    for (const end = Date.now() + 5_000; t.services.projector!.projectedSeq < last && Date.now() < end; ) await sleep(20);
    expect(t.services.projector!.projectedSeq).toBe(last);
  });
});
