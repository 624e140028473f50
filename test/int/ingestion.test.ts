import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { bucketOf, readBucket, StagingWriter } from "../../src/ingestion/staging.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "20" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST" | "PUT" | "DELETE", url: string, payload?: unknown, headers: Record<string, string> = t.auth) =>
  t.app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });

let seq = 0;
/** A fresh external identifier value, so tests never meet each other's patients. */
const mrn = () => `MRN-${process.pid}-${Date.now()}-${++seq}`;
const patientRow = (value: string, extra: Record<string, unknown> = {}) => ({ type: "patient", data: { first_name: "Ada", timezone: "UTC", external_identifiers: [{ system: "mrn", value }], ...extra } });
const symptomRow = (ref: string, ts: string, score: number, extra: Record<string, unknown> = {}) => ({
  type: "log",
  data: { event_type: "symptom_report", patient_id: ref, timestamp: ts, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] }, ...extra },
});

async function createJob(body: Record<string, unknown>) {
  const r = await inject("POST", "/v1/ingestion/jobs", body);
  expect(r.statusCode, r.body).toBe(201);
  return r.json().job_id as string;
}

async function job(id: string) {
  return (await inject("GET", `/v1/ingestion/jobs/${id}`)).json();
}

/** Statuses of a job still at work (the rest: awaiting confirmation, or ended). */
const AT_WORK = ["queued", "validating", "inserting_patients", "inserting_logs", "replaying", "backfilling"];

/** Polls the job until `done` holds (or 20 s pass). */
async function waitJob(id: string, done: (j: { status: string; stage: string }) => boolean = (j) => !AT_WORK.includes(j.status)) {
  const end = Date.now() + 20_000;
  for (;;) {
    const j = await job(id);
    if (done(j) || Date.now() > end) return j;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function patientByMrn(value: string): Promise<string | null> {
  const r = (await inject("GET", `/v1/patients?system=mrn&value=${encodeURIComponent(value)}`)).json();
  return r.patients[0]?.id ?? null;
}

async function symptoms(pid: string) {
  return (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json().payload.symptoms as { current_score: number; history: unknown[] }[];
}

/** The app on a real socket (once per file), for uploads: the body must stream. */
let served: Promise<string> | null = null;
const listening = () => (served ??= t.app.listen({ port: 0, host: "127.0.0.1" }));

describe("ingestion jobs", () => {
  it("waits for confirmation, then replays in timestamp order, backfills views and completes", async () => {
    const a = mrn();
    const id = await createJob({
      records: [patientRow(a), symptomRow(a, "2026-03-02T10:00:00Z", 7), symptomRow(`mrn|${a}`, "2026-03-01T10:00:00Z", 3)],
      summary_types: ["symptom_snapshot"],
    });
    const waiting = await waitJob(id);
    // Staged logs count as inserted: the review says how many went in, none replayed yet.
    expect(waiting).toMatchObject({ status: "awaiting_confirmation", stage: "AWAITING_CONFIRMATION", patients_created: 1, logs_total: 2, logs_staged: 2, logs_processed: 2, logs_replayed: 0 });
    // A job waiting for a person holds no slot, so V8's heap growth is not capped for it.
    expect(t.services.jobRunner!.heapCapped).toBe(false);
    const pid = (await patientByMrn(a))!;
    expect(await symptoms(pid)).toEqual([]);

    const c = await inject("POST", `/v1/ingestion/jobs/${id}/confirm`, {});
    expect(c.statusCode).toBe(200);
    const done = await waitJob(id);
    expect(done).toMatchObject({
      status: "completed",
      progress_pct: 100,
      logs_processed: 2,
      logs_replayed: 2,
      logs_failed: 0,
      logs_by_event_type: { symptom_report: 2 },
      backfill_status: "completed",
      summary_types: ["symptom_snapshot"],
      estimated_seconds_remaining: null,
    });
    expect(done.view_backfill_job_id).toMatch(/^job_/);
    const s = await symptoms(pid);
    expect(s[0]).toMatchObject({ current_score: 7 });
    expect(s[0]!.history).toHaveLength(2);
    const view = await inject("GET", `/v1/state/${pid}/views/symptom_snapshot`);
    expect(view.statusCode).toBe(200);
  });

  it("runs straight through without confirmation, reusing an existing patient found by its identifier", async () => {
    const a = mrn();
    const existing = (await inject("POST", "/v1/patients", { first_name: "Old", external_identifiers: [{ system: "mrn", value: a }] })).json().id;
    const other = (await inject("POST", "/v1/patients", { first_name: "ById" })).json().id;
    const id = await createJob({
      require_confirmation: false,
      records: [patientRow(a), symptomRow(a, "2026-03-01T10:00:00Z", 5), symptomRow(other, "2026-03-01T10:00:00Z", 2)],
    });
    const done = await waitJob(id);
    expect(done).toMatchObject({ status: "completed", patients_total: 1, patients_processed: 1, patients_created: 0, logs_processed: 2 });
    expect((await symptoms(existing))[0]).toMatchObject({ current_score: 5 });
    expect((await symptoms(other))[0]).toMatchObject({ current_score: 2 });
  });

  it("keeps created patients but drops staged logs on cancel without rollback", async () => {
    const a = mrn();
    const id = await createJob({ records: [patientRow(a), symptomRow(a, "2026-03-01T10:00:00Z", 5)] });
    await waitJob(id, (j) => j.status === "awaiting_confirmation");
    // No body, but the JSON content type that many HTTP clients send with every request.
    const r = await t.app.inject({ method: "POST", url: `/v1/ingestion/jobs/${id}/cancel`, headers: { ...t.auth, "content-type": "application/json" } });
    expect(r.json()).toMatchObject({ status: "cancelled", stage: "AWAITING_CONFIRMATION", logs_processed: 0 });
    const pid = await patientByMrn(a);
    expect(pid).not.toBeNull();
    expect(await symptoms(pid!)).toEqual([]);
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/confirm`, {})).statusCode).toBe(409);
  });

  it("removes the patients it created, and only those, on cancel with rollback", async () => {
    const a = mrn();
    const b = mrn();
    const kept = (await inject("POST", "/v1/patients", { external_identifiers: [{ system: "mrn", value: b }] })).json().id;
    const id = await createJob({ rollback_on_cancel: true, records: [patientRow(a), patientRow(b), symptomRow(a, "2026-03-01T10:00:00Z", 5)] });
    await waitJob(id, (j) => j.status === "awaiting_confirmation");
    const r = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`);
    expect(r.json()).toMatchObject({ status: "cancelled", patients_created: 1, patients_rolled_back: 1 });
    expect(await patientByMrn(a)).toBeNull();
    expect(await patientByMrn(b)).toBe(kept);
    // The identifier is free again.
    expect((await inject("POST", "/v1/patients", { external_identifiers: [{ system: "mrn", value: a }] })).statusCode).toBe(201);
  });

  it("fails in VALIDATING with every structural line error, creating nothing", async () => {
    const a = mrn();
    const id = await createJob({
      records: [
        patientRow(a),
        symptomRow("nobody-declared-this", "2026-03-01T10:00:00Z", 5),
        { type: "visit", data: {} },
        patientRow(mrn(), { timezone: "Mars/Olympus" }),
        "not an object",
        symptomRow(a, "2026-03-01T10:00:00Z", 99),
      ],
    });
    const done = await waitJob(id);
    expect(done).toMatchObject({ status: "failed", stage: "VALIDATING", patients_created: 0 });
    expect(done.error_summary.map((e: { line: number; code: string }) => [e.line, e.code])).toEqual([
      [2, "unknown_patient"],
      [3, "unknown_row_type"],
      [4, "invalid_patient"],
      [5, "invalid_row"],
      [6, "validation_error"],
    ]);
    expect(done.status_message).toMatch(/4 invalid line/);
    expect(await patientByMrn(a)).toBeNull();
  });

  it("fails in VALIDATING past a line too long with the bad lines after it too, counting every line", async () => {
    const a = mrn();
    const id = await createJob({
      records: [
        patientRow(a),
        { type: "log", data: { event_type: "memory_report", patient_id: a, timestamp: "2026-03-01T10:00:00Z", payload: { content: "m".repeat(600 * 1024) } } },
        "not an object",
        patientRow(mrn(), { timezone: "Mars/Olympus" }),
      ],
    });
    const done = await waitJob(id);
    expect(done).toMatchObject({ status: "failed", stage: "VALIDATING", lines_total: 4 });
    expect(done.error_summary.map((e: { line: number; code: string }) => [e.line, e.code])).toEqual([
      [2, "line_too_long"],
      [3, "invalid_row"],
      [4, "invalid_patient"],
    ]);
  });

  it("names the line that fails it ahead of a capped list of skippable errors", async () => {
    const a = mrn();
    const skippable = Array.from({ length: 1_500 }, (_, i) => symptomRow(a, "2026-03-01T10:00:00Z", 50 + i));
    const long = { type: "log", data: { event_type: "memory_report", patient_id: a, timestamp: "2026-03-01T10:00:00Z", payload: { content: "m".repeat(600 * 1024) } } };
    const done = await waitJob(await createJob({ records: [patientRow(a), ...skippable, long, symptomRow(a, "2026-03-02T10:00:00Z", 4)] }));
    expect(done).toMatchObject({ status: "failed", stage: "VALIDATING", error_summary_truncated: true });
    expect(done.status_message).toMatch(/1 invalid line/);
    expect(done.error_summary).toHaveLength(1_000);
    expect(done.error_summary[0]).toMatchObject({ line: 1_502, code: "line_too_long" });
    expect(done.error_summary[1]).toMatchObject({ line: 2, code: "validation_error" });
  });

  it("refuses a bare identifier value that names both a patient of the file and an existing patient", async () => {
    const shared = mrn();
    expect((await inject("POST", "/v1/patients", { external_identifiers: [{ system: "mrn", value: shared }] })).statusCode).toBe(201);
    const clash = await waitJob(await createJob({
      require_confirmation: false,
      records: [
        { type: "patient", data: { external_identifiers: [{ system: "other", value: shared }] } },
        symptomRow(shared, "2026-03-01T10:00:00Z", 4),
        symptomRow(`other|${shared}`, "2026-03-02T10:00:00Z", 4),
      ],
    }));
    expect(clash).toMatchObject({ status: "failed", stage: "VALIDATING" });
    expect(clash.error_summary).toEqual([{ line: 2, code: "ambiguous_patient", message: expect.stringMatching(/system\|value/) }]);
    // The same value declared under the existing patient's own system reuses that patient: no clash.
    const same = await waitJob(await createJob({ require_confirmation: false, records: [patientRow(shared), symptomRow(shared, "2026-03-01T10:00:00Z", 4)] }));
    expect(same).toMatchObject({ status: "completed", logs_processed: 1 });
    // Nor when that patient holds the value under a second system too: the value names one patient.
    const both = mrn();
    expect((await inject("POST", "/v1/patients", { external_identifiers: [{ system: "mrn", value: both }, { system: "legacy", value: both }] })).statusCode).toBe(201);
    const one = await waitJob(await createJob({ require_confirmation: false, records: [patientRow(both), symptomRow(both, "2026-03-01T10:00:00Z", 4)] }));
    expect(one).toMatchObject({ status: "completed", logs_processed: 1 });
  });

  it("skips logs whose only fault is their payload and completes with errors", async () => {
    const a = mrn();
    const id = await createJob({
      require_confirmation: false,
      records: [patientRow(a), symptomRow(a, "2026-03-01T10:00:00Z", 5), symptomRow(a, "2026-03-02T10:00:00Z", 99), { type: "log", data: { event_type: "no_such_type", patient_id: a, timestamp: "2026-03-01T10:00:00Z", payload: {} } }],
    });
    const done = await waitJob(id);
    expect(done).toMatchObject({ status: "completed_with_errors", logs_total: 3, logs_processed: 1, logs_failed: 2, logs_invalid: 2 });
    expect(done.error_summary.map((e: { line: number }) => e.line)).toEqual([3, 4]);
  });

  it("refuses a duplicate job idempotency key while running or completed, and allows it after a failure", async () => {
    const key = `job-key-${mrn()}`;
    const a = mrn();
    const first = await createJob({ idempotency_key: key, records: [patientRow(a)] });
    await waitJob(first, (j) => j.status === "awaiting_confirmation");
    const dup = await inject("POST", "/v1/ingestion/jobs", { idempotency_key: key, records: [patientRow(mrn())] });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ error_type: "conflict_error" });
    await inject("POST", `/v1/ingestion/jobs/${first}/confirm`, {});
    expect((await waitJob(first)).status).toBe("completed");
    expect((await inject("POST", "/v1/ingestion/jobs", { idempotency_key: key, records: [patientRow(mrn())] })).statusCode).toBe(409);

    const key2 = `job-key-${mrn()}`;
    const failing = await createJob({ idempotency_key: key2, records: [{ type: "bogus", data: {} }] });
    expect((await waitJob(failing)).status).toBe("failed");
    const again = await createJob({ idempotency_key: key2, records: [patientRow(mrn())] });
    expect(again).not.toBe(failing);
  });

  it("deduplicates per-log idempotency keys against logs already stored", async () => {
    const a = mrn();
    const pid = (await inject("POST", "/v1/patients", { external_identifiers: [{ system: "mrn", value: a }] })).json().id;
    const key = `log-key-${mrn()}`;
    const live = { log_type: "symptom_report", patient_id: pid, timestamp: "2026-03-01T10:00:00Z", idempotency_key: key, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 1 }] } };
    expect((await inject("POST", "/v1/logs/batch", { logs: [live] })).json().accepted).toBe(1);
    const id = await createJob({
      require_confirmation: false,
      records: [symptomRow(a, "2026-03-01T10:00:00Z", 8, { idempotency_key: key }), symptomRow(a, "2026-03-03T10:00:00Z", 2, { idempotency_key: `${key}-b` }), symptomRow(a, "2026-03-04T10:00:00Z", 2, { idempotency_key: `${key}-b` })],
    });
    const done = await waitJob(id);
    expect(done).toMatchObject({ status: "completed", logs_processed: 3, logs_duplicate: 2, logs_failed: 0 });
    expect((await symptoms(pid))[0]!.history).toHaveLength(2);
  });

  it("takes a file uploaded through the one-time URL, streamed over a real socket", async () => {
    const address = await listening();
    const u = (await inject("POST", "/v1/ingestion/upload-url", {})).json();
    expect(u).toMatchObject({ expires_in: 3600 });
    const url = new URL(u.upload_url);
    const put = (body: string) => fetch(`${address}${url.pathname}`, { method: "PUT", body, headers: { "content-type": "application/x-ndjson" } });
    const a = mrn();
    const lines = [patientRow(a), ...Array.from({ length: 500 }, (_, i) => symptomRow(a, new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(), i % 11))];
    const r = await put(lines.map((l) => JSON.stringify(l)).join("\r\n") + "\n");
    expect(r.status).toBe(200);
    expect((await r.json()).s3_key).toBe(u.s3_key);
    expect((await put("again")).status).toBe(409);
    expect((await fetch(`${address}/v1/ingestion/uploads/${"x".repeat(43)}`, { method: "PUT", body: "x" })).status).toBe(404);

    const id = await createJob({ s3_key: u.s3_key, require_confirmation: false });
    const done = await waitJob(id);
    expect(done).toMatchObject({ status: "completed", lines_total: 501, logs_processed: 500 });
    expect((await symptoms((await patientByMrn(a))!))[0]).toMatchObject({ current_score: 499 % 11 });
    expect((await inject("POST", "/v1/ingestion/jobs", { s3_key: u.s3_key.replace(/prj_[^/]+/, "prj_other") })).statusCode).toBe(404);
  });

  it("takes an empty upload sent without a content type, and leaves a URL whose upload failed usable", async () => {
    const address = await listening();
    const path = async () => new URL((await inject("POST", "/v1/ingestion/upload-url", {})).json().upload_url).pathname;
    const empty = await fetch(`${address}${await path()}`, { method: "PUT" });
    expect(empty.status).toBe(200);
    expect(await empty.json()).toMatchObject({ size: 0 });
    // A client whose connection drops halfway: nothing is kept, and the same URL takes the retry.
    const url = await path();
    const { port } = new URL(address);
    await new Promise<void>((resolve) => {
      const req = request({ host: "127.0.0.1", port, path: url, method: "PUT", headers: { "transfer-encoding": "chunked" } });
      req.on("error", () => resolve());
      req.write("x".repeat(100_000), () => setTimeout(() => {
        req.destroy();
        resolve();
      }, 100));
    });
    await new Promise((r) => setTimeout(r, 300));
    const retry = await fetch(`${address}${url}`, { method: "PUT", body: JSON.stringify(patientRow(mrn())) + "\n" });
    expect(retry.status).toBe(200);
    expect((await fetch(`${address}${url}`, { method: "PUT", body: "again" })).status).toBe(409);
  });

  it("refuses an upload URL whose key was revoked or whose project was deprecated, and takes it once restored", async () => {
    const put = (url: string, body: string) => t.app.inject({ method: "PUT", url: new URL(url).pathname, payload: body, headers: { "content-type": "application/octet-stream" } });
    const made = (await inject("POST", "/v1/api-keys", { name: "uploader", scopes: ["sdk:historical-ingest"] })).json();
    const byKey = (await inject("POST", "/v1/ingestion/upload-url", {}, { authorization: `Bearer ${made.key}` })).json().upload_url;
    expect((await inject("DELETE", `/v1/api-keys/${made.id}`)).statusCode).toBe(200);
    const revoked = await put(byKey, JSON.stringify(patientRow(mrn())) + "\n");
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().message).toContain("the API key this upload URL was issued from has been revoked");

    const project = (await inject("POST", "/v1/projects", { name: `uploads-${seq++}` })).json();
    const inProject = (await inject("POST", "/v1/ingestion/upload-url", {}, { ...t.auth, "x-project": project.id })).json().upload_url;
    expect((await inject("POST", `/v1/projects/${project.id}/deprecate`, {})).statusCode).toBe(200);
    expect((await put(inProject, "{}\n")).statusCode).toBe(404);
    // Refused before it was spent: restored, the project takes the same URL.
    expect((await inject("POST", `/v1/projects/${project.id}/restore`, {})).statusCode).toBe(200);
    expect((await put(inProject, JSON.stringify(patientRow(mrn())) + "\n")).statusCode).toBe(200);
  });

  it("lists the project's jobs by status and hides them from other projects", async () => {
    const id = await createJob({ records: [patientRow(mrn())] });
    await waitJob(id, (j) => j.status === "awaiting_confirmation");
    const list = (await inject("GET", "/v1/ingestion/jobs?status=awaiting_confirmation&limit=100")).json();
    expect(list.jobs.map((j: { job_id: string }) => j.job_id)).toContain(id);
    expect(list.jobs.every((j: { status: string }) => j.status === "awaiting_confirmation")).toBe(true);
    expect(list.total).toBeGreaterThanOrEqual(1);
    const other = await inject("POST", "/v1/projects", { name: `Other ${mrn()}` });
    const headers = { ...t.auth, "x-project": other.json().id };
    expect((await inject("GET", `/v1/ingestion/jobs/${id}`, undefined, headers)).statusCode).toBe(404);
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, undefined, headers)).statusCode).toBe(404);
    expect((await inject("GET", "/v1/ingestion/jobs", undefined, headers)).json()).toMatchObject({ total: 0, jobs: [], has_more: false });
  });

  it("refuses cancel once replay has started, and unknown view types", async () => {
    const a = mrn();
    const id = await createJob({ require_confirmation: false, records: [patientRow(a), symptomRow(a, "2026-03-01T10:00:00Z", 4)] });
    expect((await waitJob(id)).status).toBe("completed");
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/cancel`)).statusCode).toBe(409);
    expect((await inject("POST", "/v1/ingestion/jobs", { records: [], view_types: ["nope"] })).statusCode).toBe(422);
    expect((await inject("POST", "/v1/ingestion/jobs", {})).statusCode).toBe(422);
  });

  it("runs a completed job's view backfill again on request", async () => {
    const a = mrn();
    const id = await createJob({ require_confirmation: false, records: [patientRow(a), symptomRow(a, "2026-03-01T10:00:00Z", 4)] });
    const first = await waitJob(id);
    expect(first.backfill_status).toBe("completed");
    const r = await inject("POST", `/v1/ingestion/jobs/${id}/retry-backfill`, { summary_types: ["symptom_snapshot"] });
    expect(r.statusCode).toBe(200);
    const after = await waitJob(id, (j) => (j as unknown as { backfill_status: string }).backfill_status !== "running");
    expect(after).toMatchObject({ status: "completed", backfill_status: "completed", view_backfill_job_id: first.view_backfill_job_id });
  });

  it("stages every line, also when a bucket takes several messages", async () => {
    const s = t.services;
    const deps = { js: s.topology.js, jsm: s.topology.jsm, publisher: s.publisher, names: s.topology.names };
    const job = `job_stagingtest${seq++}`;
    const w = new StagingWriter(deps, job, 3);
    const text = "x".repeat(300);
    for (let i = 1; i <= 6_000; i++) {
      const wait = w.add(`pat_${i % 50}`, i, text);
      if (wait) await wait;
    }
    await w.flush();
    const seen = new Map<number, string>();
    let messages = 0;
    for (let b = 0; b < 3; b++) {
      for await (const part of readBucket(deps, job, b)) {
        messages++;
        for (const e of part) {
          expect(bucketOf(e.patient, 3)).toBe(b);
          expect(e.text).toBe(text);
          seen.set(e.line, e.patient);
        }
      }
    }
    expect(seen.size).toBe(6_000);
    expect(seen.get(4_321)).toBe("pat_21");
    expect(messages).toBeGreaterThan(3);
  });
});
