import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { def, expectSdkParses, req, sdkClient, type SdkClient } from "../../support/olira-sdk.js";
import { VIEW_TYPES } from "../../../readmodels/views/index.js";
import { JsonKv } from "../../../infra/nats/json-kv.js";
import { JobStore } from "../../../src/ingestion/job-store.js";
import { newJobRecord, type JobRecord } from "../../../src/ingestion/job-record.js";
import { expectJob, JOB_LIST, jobCalls, loginRecord, patientRecord, SDK_STATUSES, symptomRecord, tag } from "./jobs-sdk.js";

/** The SDK's historical ingestion (olira-compat §8, §B): the upload path, create, list, inline records, old records. */

let t: TestStack;
let sdk: SdkClient;
let calls: ReturnType<typeof jobCalls>;
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  sdk = sdkClient(t.app, t.adminKey);
  calls = jobCalls(sdk);
});
afterAll(async () => {
  await t?.close();
});
const pollUntil = (id: string, statuses: string[], seen?: string[]) => calls.pollUntil(id, statuses, seen);
const create = (body: Record<string, unknown>) => calls.create(body);
const patientId = (value: string) => calls.patientId(value);

describe("the SDK's file path: upload-url, raw PUT, create, poll to the review", () => {
  it("uploads with no body and a raw PUT, creates the job from the s3_key, and shows at the review how many logs went in", async () => {
    const config = await sdk.get("/v1/sdk/config");
    // The SDK falls back to its defaults on any failure; the route may not be there yet.
    if (config.statusCode === 200) expectSdkParses(config.json(), { ingestion_max_file_bytes: def("int"), signals_max_sync_body_bytes: def("int") });
    else expect(config.statusCode).toBe(404);

    const up = await sdk.post("/v1/ingestion/upload-url");
    expect(up.statusCode, up.body).toBe(200);
    expectSdkParses(up.json(), { upload_url: req("string"), s3_key: req("string") });
    const url = new URL(up.json().upload_url);
    expect(up.json().upload_url).toMatch(/^https?:\/\//);
    const a = `FILE-A-${tag()}`;
    const b = `FILE-B-${tag()}`;
    const lines = [patientRecord(a), patientRecord(b, "Bo"), symptomRecord(a, 1, 3), symptomRecord(a, 2, 6), loginRecord(b, 3)];
    // The SDK's separate plain PUT: no Authorization, no project header, no Content-Type.
    const put = await t.app.inject({ method: "PUT", url: url.pathname, payload: Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n")) });
    expect(put.statusCode, put.body).toBe(200);

    const key = `file-${tag()}`;
    const created = await create({ idempotency_key: key, summary_types: ["symptom_snapshot"], max_event_logs: 500, s3_key: up.json().s3_key });
    expect(created).toMatchObject({ status: "queued", stage: "QUEUED", require_confirmation: true, summary_types: ["symptom_snapshot"], patient_log_counts: {}, tokens_used: 0, cost_usd: 0 });

    const seen: string[] = [];
    const review = await pollUntil(created.job_id, ["awaiting_confirmation", "failed", "completed"], seen);
    expect(seen.every((s) => ["queued", "validating", "inserting_patients", "inserting_logs", "awaiting_confirmation"].includes(s))).toBe(true);
    const [pa, pb] = [(await patientId(a))!, (await patientId(b))!];
    expect(review).toMatchObject({
      status: "awaiting_confirmation",
      stage: "AWAITING_CONFIRMATION",
      patients_total: 2,
      patients_processed: 2,
      logs_total: 3,
      logs_processed: 3,
      logs_failed: 0,
      logs_by_event_type: { symptom_report: 2, user_login: 1 },
      patient_log_counts: { [pa]: 2, [pb]: 1 },
      patient_event_type_counts: { [pa]: { symptom_report: 2 }, [pb]: { user_login: 1 } },
      patient_replay_statuses: { [pa]: "pending", [pb]: "pending" },
      missing_template_slots: {},
      error_summary: [],
      backfill_status: null,
      backfill_progress_pct: null,
      stage_work: null,
    });
  });

  it("fails visibly when the s3_key never received a file: 404 naming the upload step", async () => {
    const up = (await sdk.post("/v1/ingestion/upload-url")).json();
    const r = await sdk.post("/v1/ingestion/jobs", { require_confirmation: true, s3_key: up.s3_key });
    expect(r.statusCode).toBe(404);
    expect(r.json().message).toMatch(/PUT the file to the upload_url/);
  });

  it("refuses a second job with the same idempotency_key while the first one stands (409)", async () => {
    const key = `dup-${tag()}`;
    const first = await create({ idempotency_key: key, records: [patientRecord(`DUP-${tag()}`)] });
    const again = await sdk.post("/v1/ingestion/jobs", { require_confirmation: true, idempotency_key: key, records: [patientRecord(`DUP-${tag()}`)] });
    expect(again.statusCode).toBe(409);
    expect(again.json().details[0]).toMatchObject({ job_id: first.job_id, job_status: expect.stringMatching(new RegExp(`^(${SDK_STATUSES.join("|")})$`)) });
  });
});

describe("list_ingestion_jobs(): page, camelCase pageSize, idempotency_key", () => {
  it("pages the project's jobs newest first, filters on the key and on the statuses, and counts the matches in total", async () => {
    const p = (await sdk.post("/v1/projects", { name: `Jobs ${tag()}` })).json();
    const scoped = sdkClient(t.app, t.adminKey, p.id);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await scoped.post("/v1/ingestion/jobs", { require_confirmation: true, idempotency_key: `page-${i}`, records: [patientRecord(`PAGE-${i}-${tag()}`)] });
      expect(r.statusCode, r.body).toBe(201);
      ids.unshift(r.json().job_id);
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const id of ids) {
      for (let j = await scoped.get(`/v1/ingestion/jobs/${id}`); j.json().status !== "awaiting_confirmation"; j = await scoped.get(`/v1/ingestion/jobs/${id}`)) await new Promise((r) => setTimeout(r, 25));
    }
    const list = async (query: Record<string, string | number>) => {
      const r = await scoped.get("/v1/ingestion/jobs", query);
      expect(r.statusCode, r.body).toBe(200);
      expectSdkParses(r.json(), JOB_LIST);
      for (const j of r.json().jobs) expectJob(j);
      return r.json<{ total: number; jobs: { job_id: string; idempotency_key: string }[] }>();
    };
    const first = await list({ page: 1, pageSize: 2 });
    expect(first.total).toBe(3);
    expect(first.jobs.map((j) => j.job_id)).toEqual(ids.slice(0, 2));
    expect((await list({ page: 2, pageSize: 2 })).jobs.map((j) => j.job_id)).toEqual(ids.slice(2));
    expect((await list({ page: 2, page_size: 2 })).jobs.map((j) => j.job_id)).toEqual(ids.slice(2));
    expect((await list({ page: 1, pageSize: 20 })).jobs).toHaveLength(3);
    const byKey = await list({ page: 1, pageSize: 20, idempotency_key: "page-1" });
    expect(byKey).toMatchObject({ total: 1, jobs: [{ job_id: ids[1], idempotency_key: "page-1" }] });
    expect((await list({ status: "awaiting_confirmation" })).total).toBe(3);
    expect((await list({ status: "running" })).total).toBe(0);
    await scoped.post(`/v1/ingestion/jobs/${ids[0]}/cancel`);
    expect((await list({ status: "cancelled" })).jobs.map((j) => j.job_id)).toEqual([ids[0]]);
    expect((await list({ status: "replaying" })).total).toBe(0);
    expect((await scoped.get("/v1/ingestion/jobs", { status: "paused" })).statusCode).toBe(422);
  });
});

describe("inline records as the SDK builds them", () => {
  it("runs patient rows with the SDK's defaults and logs with trace or without payload straight through when no confirmation is required", async () => {
    const ref = `INLINE-${tag()}`;
    const records = [
      { type: "patient", data: { first_name: "Bob", last_name: "InlineDemo", sex: "unknown", timezone: "America/New_York", external_identifiers: [{ system: "demo", value: ref }] } },
      { type: "log", data: { ...symptomRecord(ref, 5, 4).data, trace: { object_type: "conversation", object_id: "conv-1" } } },
      loginRecord(ref, 6),
    ];
    const created = await sdk.post("/v1/ingestion/jobs", { require_confirmation: false, idempotency_key: `inline-${tag()}`, records });
    expect(created.statusCode, created.body).toBe(201);
    expectJob(created.json());
    const seen: string[] = [];
    const done = await pollUntil(created.json().job_id, ["completed", "completed_with_errors", "failed"], seen);
    expect(seen).not.toContain("awaiting_confirmation");
    const pid = (await patientId(ref))!;
    expect(done).toMatchObject({ status: "completed", logs_processed: 2, logs_failed: 0, patient_replay_statuses: { [pid]: "completed" }, summary_types: [...VIEW_TYPES], progress_pct: 100 });
    const logs = (await sdk.get(`/v1/state/${pid}/logs`)).json().logs as { type: string; payload: unknown; trace: unknown }[];
    expect(logs.map((l) => l.type).sort()).toEqual(["symptom_report", "user_login"]);
    expect(logs.find((l) => l.type === "user_login")!.payload).toEqual({});
  });

  it("keeps a log skipped for its payload as completed_with_errors, with the line in error_summary", async () => {
    const ref = `BAD-${tag()}`;
    const bad = { type: "log", data: { event_type: "symptom_report", patient_id: ref, timestamp: "2025-06-01T09:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 99 }] } } };
    const created = await create({ require_confirmation: false, records: [patientRecord(ref), bad, symptomRecord(ref, 2, 1)] });
    const done = await pollUntil(created.job_id, ["completed", "completed_with_errors", "failed"]);
    expect(done).toMatchObject({ status: "completed_with_errors", logs_total: 2, logs_processed: 1, logs_failed: 1, error_summary: [{ line: 2, code: "validation_error" }] });
  });
});

describe("job records of an earlier build", () => {
  it("shows a stored status running as the stage at work, with every field the SDK reads", async () => {
    const p = (await sdk.post("/v1/projects", { name: `Legacy ${tag()}` })).json();
    const fresh = newJobRecord(
      { job_id: "job_legacy1", organization_id: "org_default", project_id: p.id, require_confirmation: true, rollback_on_cancel: false, idempotency_key: null, summary_types: null, source: { object: "none", inline: true, bytes: 10 } },
      new Date().toISOString(),
    );
    // As an earlier build wrote it: "running" for every working stage, none of the fields added since.
    const legacy = { ...fresh, status: "running", stage: "REPLAYING", logs_staged: 4, logs_processed: 3 } as Record<string, unknown>;
    for (const k of ["skip_backfill", "patients_removed", "logs_replayed", "logs_removed", "patient_log_counts", "patient_event_type_counts", "patient_replay_statuses", "patient_details_truncated", "removed_patients", "backfill_patients_total"]) delete legacy[k];
    const { kv } = t.services.topology;
    await new JobStore(new JsonKv(kv.ingestionJobs), new JsonKv(kv.ingestionKeys)).put({ record: legacy as unknown as JobRecord, snapshot: null });
    const scoped = sdkClient(t.app, t.adminKey, p.id);
    const r = await scoped.get("/v1/ingestion/jobs/job_legacy1");
    expect(r.statusCode, r.body).toBe(200);
    expectJob(r.json());
    expect(r.json()).toMatchObject({ status: "replaying", stage: "REPLAYING", logs_replayed: 3, patient_log_counts: {}, skip_backfill: false });
    expect((await scoped.get("/v1/ingestion/jobs", { status: "running" })).json().jobs.map((j: { job_id: string }) => j.job_id)).toEqual(["job_legacy1"]);
    expect((await scoped.get("/v1/ingestion/jobs", { status: "replaying" })).json().total).toBe(1);
  });
});
