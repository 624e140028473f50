import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { BATCH_RESULT, expectSdkParses, sdkClient, type SdkClient } from "../../support/olira-sdk.js";
import { SAMPLES } from "../../unit/readmodels/samples.js";
import { readSubject } from "../../../infra/nats/log-history.js";
import { LogWriter, type PatientLogMessage } from "../../../src/logs/log-writer.js";
import { LOG_TYPE_ALIASES } from "../../../catalog/index.js";
import type { LogRecord } from "../../../readmodels/log-record.js";


/** What the SDK's queued `log()` sends for each entry: every key, unset ones as null. */
const queued = (patientId: string, over: Record<string, unknown> = {}) => ({
  log_type: "symptom_report",
  patient_id: patientId,
  timestamp: null,
  log_id: randomUUID(),
  idempotency_key: null,
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }] },
  metadata: null,
  context: { environment: "development", service: "", sdk_version: "1.11.0", sdk_language: "python" },
  trace: null,
  write_back: false,
  write_back_integration_id: null,
  ...over,
});

let t: TestStack;
let sdk: SdkClient;
let pid: string;
beforeAll(async () => {
  t = await startStack();
  sdk = sdkClient(t.app, t.adminKey);
  pid = (await sdk.post("/v1/patients", { sex: "unknown", timezone: "UTC", external_identifiers: [], first_name: "Logs" })).json().id;
});
afterAll(async () => {
  await t?.close();
});

async function stored(patientId = pid): Promise<LogRecord[]> {
  const { js, jsm, names } = t.services.topology;
  const out: LogRecord[] = [];
  for await (const m of readSubject<PatientLogMessage>(js, jsm, names.logsStream, names.logSubject("org_default", "prj_default", patientId))) out.push(...m.data.logs);
  return out;
}

const newPatient = async () => (await sdk.post("/v1/patients", { sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id as string;

describe("the SDK's log() and log_batch() against POST /v1/logs/batch", () => {
  it("stores a queued log sent with every optional key null at its acceptance time, and answers what the SDK parses", async () => {
    const before = new Date().toISOString();
    const r = await sdk.post("/v1/logs/batch", { logs: [queued(pid)] });
    expect(r.statusCode).toBe(200);
    expectSdkParses(r.json(), BATCH_RESULT);
    expect(r.json()).toMatchObject({ accepted: 1, failed: 0, errors: [] });
    const log = (await stored()).find((l) => l.id === r.json().results[0].id)!;
    expect(log.timestamp).toBe(log.ingested_at);
    expect(log.timestamp >= before && log.timestamp <= new Date().toISOString()).toBe(true);
  });

  it("stores a log_batch() entry whose null keys were dropped (no timestamp key at all)", async () => {
    const { timestamp: _t, idempotency_key: _k, metadata: _m, trace: _tr, write_back_integration_id: _w, ...entry } = queued(pid);
    const r = await sdk.post("/v1/logs/batch", { logs: [entry] });
    expectSdkParses(r.json(), BATCH_RESULT);
    expect(r.json()).toMatchObject({ accepted: 1, failed: 0 });
    const log = (await stored()).find((l) => l.id === r.json().results[0].id)!;
    expect(log.timestamp).toBe(log.ingested_at);
  });

  it("takes a full flush of the SDK's queue: 50 logs of 220 KiB each (11 MB, over the ordinary body limit)", async () => {
    const patient = await newPatient();
    const content = "x".repeat(220 * 1024);
    const logs = Array.from({ length: 50 }, () => queued(patient, { log_type: "memory_report", payload: { content } }));
    const r = await sdk.post("/v1/logs/batch", { logs });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ accepted: 50, failed: 0 });
  });

  it("still checks a timestamp that is sent, with a located error the SDK can read", async () => {
    const r = await sdk.post("/v1/logs/batch", { logs: [queued(pid), queued(pid, { timestamp: "yesterday morning" })] });
    expectSdkParses(r.json(), BATCH_RESULT);
    expect(r.json()).toMatchObject({ accepted: 1, failed: 1 });
    expect(r.json().errors[0]).toMatchObject({ index: 1, code: "validation_error", message: expect.stringContaining("timestamp") });
  });

  it("keeps the envelope's context and log_id in the log's metadata, and accepts the write_back flags", async () => {
    const entry = queued(pid, { metadata: { source_app: "diary" }, write_back: true, write_back_integration_id: "ehr-1" });
    const r = await sdk.post("/v1/logs/batch", { logs: [entry] });
    expect(r.json()).toMatchObject({ accepted: 1, failed: 0 });
    const log = (await stored()).find((l) => l.id === r.json().results[0].id)!;
    expect(log.metadata).toEqual({ source_app: "diary", context: entry.context, log_id: entry.log_id });
    expect(JSON.stringify(log)).not.toContain("write_back");
  });

  it("refuses envelope extras of the wrong type, naming the field", async () => {
    const r = await sdk.post("/v1/logs/batch", { logs: [queued(pid, { log_id: 42 }), queued(pid, { context: "prod" }), queued(pid, { write_back: "yes" })] });
    expect(r.json()).toMatchObject({ accepted: 0, failed: 3 });
    expect(r.json().errors.map((e: { message: string }) => e.message.split(" ")[0])).toEqual(["logs.0.log_id", "logs.1.context", "logs.2.write_back"]);
  });

  it("answers a re-sent batch (same log ids, no idempotency keys) as duplicates of the first, storing nothing twice", async () => {
    const patient = await newPatient();
    const body = { logs: [queued(patient), queued(patient, { log_type: "mood_report", payload: SAMPLES.mood_report })] };
    const first = (await sdk.post("/v1/logs/batch", body)).json();
    const again = (await sdk.post("/v1/logs/batch", body)).json();
    expectSdkParses(again, BATCH_RESULT);
    expect(again).toMatchObject({ accepted: 0, failed: 0, duplicates: 2 });
    expect(again.results.map((x: { id: string }) => x.id)).toEqual(first.results.map((x: { id: string }) => x.id));
    expect(await stored(patient)).toHaveLength(2);
  });

  it("lets an idempotency key decide when a log has both, and keeps log ids of two projects apart", async () => {
    const patient = await newPatient();
    const logId = randomUUID();
    const a = (await sdk.post("/v1/logs/batch", { logs: [queued(patient, { log_id: logId, idempotency_key: "k-a" })] })).json();
    const b = (await sdk.post("/v1/logs/batch", { logs: [queued(patient, { log_id: logId, idempotency_key: "k-b" })] })).json();
    expect([a.accepted, b.accepted]).toEqual([1, 1]);
    const project = (await t.app.inject({ method: "POST", url: "/v1/projects", headers: t.auth, payload: { name: "Second" } })).json();
    const other = sdkClient(t.app, t.adminKey, project.slug);
    const otherPatient = (await other.post("/v1/patients", { sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id;
    const mine = (await sdk.post("/v1/logs/batch", { logs: [queued(patient, { log_id: "shared-id" })] })).json();
    const theirs = (await other.post("/v1/logs/batch", { logs: [queued(otherPatient, { log_id: "shared-id" })] })).json();
    expect([mine.accepted, theirs.accepted]).toEqual([1, 1]);
  });

  it("treats a log id seen the day before as a duplicate across midnight, and takes it again after the window", async () => {
    const s = t.services;
    const patient = await newPatient();
    const day = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 10 * 86_400_000;
    const writerAt = (ms: number) =>
      new LogWriter({
        publisher: s.publisher, names: s.topology.names, js: s.topology.js, jsm: s.topology.jsm, patients: s.patients,
        ledger: s.ledger, logIds: s.logIds, maxMessageBytes: 1024 * 1024, claimLeaseMs: 5_000, clock: () => ms,
      });
    const scope = { organization_id: "org_default", project_id: "prj_default" };
    const entry = [queued(patient, { log_id: "across-midnight" })];
    const write = (ms: number) => writerAt(ms).writeBatch(scope, entry, { source: "batch", atomic: false, at: ["logs"] });
    const first = await write(day - 1_000);
    expect(first).toMatchObject({ accepted: 1 });
    expect(await write(day + 5_000)).toMatchObject({ accepted: 0, duplicates: 1, results: [{ id: first.results[0]!.id, status: "duplicate" }] });
    expect(await write(day + 86_400_000 + 5_000)).toMatchObject({ accepted: 1, duplicates: 0 });
  });
});

describe("the SDK's legacy log type names", () => {
  const legacy = Object.entries(LOG_TYPE_ALIASES).slice(-32);

  it("covers the 32 names the SDK's enum still offers", () => {
    expect(legacy.map(([name]) => name)).toContain("moods_report");
    expect(legacy.map(([name]) => name)).toContain("treatment_phase_changed");
    expect(new Set(legacy.map(([name]) => name)).size).toBe(32);
  });

  it("accepts each in a batch and stores the log under its canonical type", async () => {
    const patient = await newPatient();
    const logs = legacy.map(([name, type]) => queued(patient, { log_type: name, payload: SAMPLES[type] }));
    const r = (await sdk.post("/v1/logs/batch", { logs })).json();
    expect(r.errors).toEqual([]);
    expect(r.accepted).toBe(32);
    const types = new Map((await stored(patient)).map((l) => [l.id, l.log_type]));
    r.results.forEach((x: { index: number; id: string }) => expect(types.get(x.id)).toBe(legacy[x.index]![1]));
  });

  it("answers GET /v1/log-types/{name} for each with its canonical entry", async () => {
    for (const [name, type] of legacy) {
      const r = await sdk.get(`/v1/log-types/${name}`);
      expect(r.statusCode, name).toBe(200);
      expect(r.json().subtype).toBe(type);
    }
  });

  it("filters the log query's type on a legacy name", async () => {
    const patient = await newPatient();
    await sdk.post("/v1/logs/batch", { logs: [queued(patient, { log_type: "moods_report", payload: SAMPLES.mood_report }), queued(patient)] });
    const r = await sdk.post(`/v1/state/${patient}/logs/query`, { filter: [{ field: "type", op: "in", value: ["moods_report", "immunization_reported"] }] });
    expect(r.statusCode).toBe(200);
    expect(r.json().rows.map((x: { type: string }) => x.type)).toEqual(["mood_report"]);
  });

  it("takes a legacy name from a device gateway on the NATS feed", async () => {
    const patient = await newPatient();
    const { nc, topology } = t.services;
    nc.publish(topology.names.ingestSubject("org_default", "prj_default"), JSON.stringify({ log_type: "care_team_updated", patient_id: patient, payload: SAMPLES.care_team }));
    const until = Date.now() + 5_000;
    let logs: LogRecord[] = [];
    while (logs.length === 0 && Date.now() < until) {
      logs = await stored(patient);
      if (logs.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(logs.map((l) => l.log_type)).toEqual(["care_team"]);
    expect(logs[0]!.timestamp).toBe(logs[0]!.ingested_at);
  });
});
