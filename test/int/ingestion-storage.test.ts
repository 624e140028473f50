import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StageDeps } from "../../actors/ingestion/stage-deps.js";
import { JetStreamPublishError } from "../../infra/nats/jetstream-publisher.js";
import { readSubject } from "../../infra/nats/log-history.js";
import { BOOTSTRAP } from "../../src/control/bootstrap.js";
import { loadConfig } from "../../src/config.js";
import { buildApp } from "../../app/http/app.js";
import type { BatchAnswer, LogWriter, PatientLogMessage } from "../../src/logs/log-writer.js";
import { createServices, type Services } from "../../app/services.js";
import { LOG_MIX } from "../../bench/log-mix.js";
import { closeAndDrop } from "../support/stack.js";

// NATS and Redis are shared with other tests and never stopped: storage failures are
// faked where the job writes, the way a NATS restart shows there (a publish without an
// ack, logs answered "storage_error").

interface Stack {
  services: Services;
  app: FastifyInstance;
  auth: { authorization: string };
  destroy(): Promise<void>;
}

/** How long a stage retries failing storage in these tests (STORAGE_RETRY_MS is 2 minutes). */
const RETRY_MS = 3_000;

async function startStack(opts: { replayThread: boolean; beforeReplayChunk?: StageDeps["beforeReplayChunk"] }): Promise<Stack> {
  const ns = `t${randomBytes(5).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "pss-test-"));
  const adminKey = `admin-${randomBytes(16).toString("hex")}`;
  const config = loadConfig({ PSS_NAMESPACE: ns, DATA_DIR: dataDir, PSS_ADMIN_KEY: adminKey, LOG_LEVEL: "silent", PSS_VIEW_DEBOUNCE_MS: "20", PSS_REPLAY_THREAD: opts.replayThread ? "1" : "0" });
  const services = await createServices(config, "all", { ingestion: { bucketBytes: 8 * 1024, storageRetryMs: RETRY_MS, beforeReplayChunk: opts.beforeReplayChunk } });
  const app = await buildApp(services, { logger: false });
  await app.ready();
  return { services, app, auth: { authorization: `Bearer ${adminKey}` }, destroy: () => closeAndDrop(app, services, ns, dataDir) };
}

const PATIENTS = 60;
const LOGS_PER_PATIENT = 10;
const LOGS = PATIENTS * LOGS_PER_PATIENT;

/** Patients `${prefix}-p`, then their logs interleaved, each with an idempotency key. */
function file(prefix: string) {
  const rows: unknown[] = [];
  for (let p = 0; p < PATIENTS; p++) rows.push({ type: "patient", data: { first_name: `P${p}`, external_identifiers: [{ system: "mrn", value: `${prefix}-${p}` }] } });
  for (let i = 0; i < LOGS_PER_PATIENT; i++) {
    for (let p = 0; p < PATIENTS; p++) {
      const m = LOG_MIX[(p + i) % LOG_MIX.length]!;
      const timestamp = new Date(Date.UTC(2026, 0, 1) + i * 3_600_000 + p * 1000).toISOString();
      rows.push({ type: "log", data: { event_type: m.log_type, patient_id: `${prefix}-${p}`, timestamp, idempotency_key: `${prefix}-${p}-${i}`, payload: m.payload(i * 7 + p) } });
    }
  }
  return rows;
}

const timeOut = () => new JetStreamPublishError("no JetStream ack within 5000 ms", undefined, "timeout");

/** Whether a writeBatch call is a job's replay (its logs carry the job's metadata). */
const isReplay = (raw: unknown[]) => (raw[0] as { metadata?: { ingestion_job_id?: string } } | undefined)?.metadata?.ingestion_job_id !== undefined;

/**
 * A writeBatch whose publishes failed for half the logs: the even ones are stored, the
 * odd ones answered "storage_error", as LogWriter answers a publish that got no ack.
 */
async function halfStored(real: LogWriter["writeBatch"], ...[scope, raw, opts]: Parameters<LogWriter["writeBatch"]>): Promise<BatchAnswer> {
  const at = opts.at as (i: number) => (string | number)[];
  const ans = await real(scope, raw.filter((_, i) => i % 2 === 0), { ...opts, at: (i) => at(i * 2) });
  const odd = raw.flatMap((_, i) => (i % 2 === 1 ? [i] : []));
  const message = "log could not be stored: no JetStream ack within 5000 ms; retry it";
  return {
    accepted: ans.accepted,
    duplicates: ans.duplicates,
    failed: ans.failed + odd.length,
    errors: [...ans.errors.map((e) => ({ ...e, index: e.index * 2 })), ...odd.map((index) => ({ index, code: "storage_error", message, details: [] }))],
    results: [...ans.results.map((r) => ({ ...r, index: r.index * 2 })), ...odd.map((index) => ({ index, id: null, status: "failed" as const }))],
  };
}

let live: Stack | null = null;
afterEach(async () => {
  vi.restoreAllMocks();
  await live?.destroy();
  live = null;
});

async function run(s: Stack, prefix: string) {
  const r = await s.app.inject({ method: "POST", url: "/v1/ingestion/jobs", headers: s.auth, payload: { require_confirmation: false, records: file(prefix) } });
  expect(r.statusCode, r.body).toBe(201);
  return r.json().job_id as string;
}

async function job(s: Stack, id: string) {
  return (await s.app.inject({ method: "GET", url: `/v1/ingestion/jobs/${id}`, headers: s.auth })).json();
}

async function waitJob(s: Stack, id: string, done: (j: { status: string }) => boolean = (j) => !["queued", "validating", "inserting_patients", "inserting_logs", "replaying", "backfilling"].includes(j.status)) {
  for (const end = Date.now() + 40_000; ; ) {
    const j = await job(s, id);
    if (done(j) || Date.now() > end) return j;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every patient's stored history holds each of its file lines once, and its state applied them all. */
async function expectEachLogOnce(s: Stack, prefix: string) {
  const { js, jsm, names } = s.services.topology;
  const lines: number[] = [];
  for (let p = 0; p < PATIENTS; p++) {
    const found = (await s.app.inject({ method: "GET", url: `/v1/patients?system=mrn&value=${prefix}-${p}`, headers: s.auth })).json();
    const pid = found.patients[0].id as string;
    const subject = names.logSubject(BOOTSTRAP.organization_id, BOOTSTRAP.project_id, pid);
    for await (const m of readSubject<PatientLogMessage>(js, jsm, names.logsStream, subject)) for (const l of m.data.logs) lines.push(l.metadata!.ingestion_line as number);
    if (p % 10 === 0) {
      const logs = (await s.app.inject({ method: "GET", url: `/v1/state/${pid}/logs?limit=500`, headers: s.auth })).json();
      expect(logs.count, `patient ${p}: applied`).toBe(LOGS_PER_PATIENT);
    }
  }
  expect(lines.length).toBe(LOGS);
  expect(new Set(lines).size).toBe(LOGS);
}

describe("an ingestion job whose storage fails for a while", () => {
  it("stages its logs again when a staging publish got no ack (INSERTING_LOGS), each once", async () => {
    const s = (live = await startStack({ replayThread: false }));
    const publisher = s.services.publisher;
    const real = publisher.publish.bind(publisher);
    let failures = 0;
    // Stored, but its ack lost: the run that staged it fails, the next starts from empty.
    vi.spyOn(publisher, "publish").mockImplementation(async (subject, data, o) => {
      const ack = await real(subject, data, o);
      if (!/\.staging\.[^.]+\.p\./.test(subject) || failures >= 1) return ack;
      failures++;
      throw timeOut();
    });
    const id = await run(s, "D");
    const done = await waitJob(s, id);
    expect(failures).toBe(1);
    expect(done).toMatchObject({ status: "completed", logs_staged: LOGS, logs_processed: LOGS, logs_duplicate: 0, logs_failed: 0 });
    await expectEachLogOnce(s, "D");
  });

  it("writes the failed chunks again once it answers (REPLAYING), each log stored once, on the job's thread", async () => {
    const s = (live = await startStack({ replayThread: false }));
    const writer = s.services.logWriter;
    const real = writer.writeBatch.bind(writer);
    let failures = 0;
    // A publish time-out thrown (an idempotency claim got no ack), then a chunk of which
    // half was stored and half answered "storage_error", then a second time-out.
    vi.spyOn(writer, "writeBatch").mockImplementation(async (...args) => {
      if (!isReplay(args[1]) || failures >= 3) return real(...args);
      failures++;
      if (failures === 2) return halfStored(real, ...args);
      throw timeOut();
    });
    const id = await run(s, "A");
    await vi.waitFor(() => expect(failures).toBeGreaterThan(0), { timeout: 20_000 });
    // Retrying, the job keeps working in its stage.
    expect(await job(s, id)).toMatchObject({ status: "replaying", stage: "REPLAYING" });
    const done = await waitJob(s, id);
    expect(failures).toBe(3);
    expect(done).toMatchObject({ status: "completed", stage: "BACKFILLING", logs_processed: LOGS, logs_duplicate: 0, logs_failed: 0, error_summary: [], backfill_status: "completed" });
    await expectEachLogOnce(s, "A");
  });

  it("writes the failed chunks again once it answers (REPLAYING), each log stored once, on the replay thread", async () => {
    let failures = 0;
    // The replay thread writes through its own connections: the failure is thrown where
    // the job's thread hands it each chunk.
    const s = (live = await startStack({
      replayThread: true,
      beforeReplayChunk: async () => {
        if (failures < 2) {
          failures++;
          throw timeOut();
        }
      },
    }));
    const id = await run(s, "B");
    const done = await waitJob(s, id);
    expect(failures).toBe(2);
    expect(done).toMatchObject({ status: "completed", logs_processed: LOGS, logs_duplicate: 0, logs_failed: 0, backfill_status: "completed" });
    await expectEachLogOnce(s, "B");
  });

  it("fails the job once the storage has failed in REPLAYING for longer than the bound, saying why", async () => {
    let since = 0;
    const s = (live = await startStack({
      replayThread: false,
      beforeReplayChunk: async () => {
        since ||= Date.now();
        throw timeOut();
      },
    }));
    const id = await run(s, "C");
    await vi.waitFor(() => expect(since).toBeGreaterThan(0), { timeout: 20_000 });
    expect(await job(s, id)).toMatchObject({ status: "replaying", stage: "REPLAYING" });
    const done = await waitJob(s, id);
    expect(Date.now() - since).toBeGreaterThanOrEqual(RETRY_MS);
    expect(done).toMatchObject({ status: "failed", stage: "REPLAYING", logs_processed: 0 });
    expect(done.status_message).toBe(`replay failed: no JetStream ack within 5000 ms (still failing after ${RETRY_MS / 1000} s of retries)`);
  });
});
