import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuthenticationError, AuthorizationError, ConflictError, NotFoundError, PatientStateClient } from "../../client/index.js";
import { startListening } from "../support/console.js";
import { eventually, type TestStack } from "../support/stack.js";

// The client's admin side: projects, keys and tokens, operations reads and ingestion jobs.
// Retries and network failures are in client-failures.test.ts.
let t: TestStack;
let base: string;
let pss: PatientStateClient;

beforeAll(async () => {
  ({ t, base } = await startListening());
  pss = new PatientStateClient({ baseUrl: base, apiKey: t.adminKey });
});
afterAll(async () => {
  await t?.close();
});

describe("client: projects, keys and tokens", () => {
  it("manages projects by id or slug, and scopes the client with project", async () => {
    const p = await pss.projects.create({ name: "Cardiology", slug: "cardio" });
    expect(await pss.projects.get("cardio")).toEqual(p);
    expect((await pss.projects.list({ status: "active" })).map((x) => x.slug)).toEqual(expect.arrayContaining(["default", "cardio"]));
    expect(await pss.projects.update("cardio", { name: "Cardiology 2" })).toMatchObject({ id: p.id, name: "Cardiology 2" });
    const inCardio = new PatientStateClient({ baseUrl: base, apiKey: t.adminKey, project: "cardio" });
    const patient = await inCardio.patients.create({ first_name: "Heart" });
    await expect(pss.patients.get(patient.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await pss.projects.deprecate(p.id)).toMatchObject({ status: "deprecated", deprecated_at: expect.any(String) });
    await expect(inCardio.patients.get(patient.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await pss.projects.restore("cardio")).toMatchObject({ status: "active", deprecated_at: null });
    expect((await inCardio.patients.get(patient.id)).first_name).toBe("Heart");
    await expect(pss.projects.deprecate("default")).rejects.toBeInstanceOf(ConflictError);
  });

  it("keeps a project's description and environment, updates only what is given, duplicates settings without data, and deletes a deprecated project", async () => {
    const p = await pss.projects.create({ name: "Pulmonology", slug: "pulmo", description: "Lung clinic", environment: "dev" });
    expect(p).toMatchObject({ description: "Lung clinic", environment: "dev" });
    expect(await pss.projects.update("pulmo", { environment: "staging" })).toMatchObject({ name: "Pulmonology", description: "Lung clinic", environment: "staging" });
    expect(await pss.projects.update("pulmo", { description: null })).toMatchObject({ description: null, environment: "staging" });
    const inPulmo = new PatientStateClient({ baseUrl: base, apiKey: t.adminKey, project: "pulmo" });
    await inPulmo.patients.create({ first_name: "Breath" });
    const copy = await pss.projects.duplicate("pulmo", { name: "Pulmonology prod", environment: "prod" });
    expect(copy).toMatchObject({ slug: "pulmonology-prod", environment: "prod", status: "active", is_default: false });
    expect((await new PatientStateClient({ baseUrl: base, apiKey: t.adminKey, project: copy.id }).patients.list()).total).toBe(0);
    await expect(pss.projects.delete("pulmo")).rejects.toBeInstanceOf(ConflictError);
    await pss.projects.deprecate("pulmo");
    await expect(pss.projects.delete("pulmo")).resolves.toBeUndefined();
    await expect(pss.projects.get("pulmo")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("creates, lists and revokes API keys; a missing scope is 403 and a revoked key 401", async () => {
    const k = await pss.apiKeys.create({ name: "reader", scopes: ["sdk:state-read"] });
    expect(k).toMatchObject({ name: "reader", scopes: ["sdk:state-read"], project_id: null, key: expect.any(String) });
    expect((await pss.apiKeys.list()).find((x) => x.id === k.id)).toMatchObject({ revoked_at: null });
    const reader = new PatientStateClient({ baseUrl: base, apiKey: k.key });
    const denied = await reader.patients.create().catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(AuthorizationError);
    expect(denied).toMatchObject({ status_code: 403, error_type: "authorization_error" });
    expect((await pss.apiKeys.revoke(k.id)).revoked_at).not.toBeNull();
    // Revocations reach the caches through a KV watch.
    const refused = await eventually(() => reader.query().count().catch((e: unknown) => e), (e) => e instanceof AuthenticationError, 3_000);
    expect(refused).toBeInstanceOf(AuthenticationError);
    const bad = new PatientStateClient({ baseUrl: base, apiKey: "not-a-key" });
    await expect(bad.projects.list()).rejects.toMatchObject({ status_code: 401, error_type: "authentication_error" });
  });

  it("exchanges the API key for a JWT and mints patient tokens bound to one patient", async () => {
    const jwt = await pss.auth.token();
    expect(jwt).toMatchObject({ token_type: "bearer", expires_in: expect.any(Number) });
    const viaJwt = new PatientStateClient({ baseUrl: base, token: jwt.access_token });
    const p = await viaJwt.patients.create({ first_name: "Jwt" });
    const q = await viaJwt.patients.create();
    await pss.logs.batch([{ log_type: "user_login", patient_id: p.id, timestamp: "2026-07-01T10:00:00Z", payload: {} }]);
    const pt = await pss.patientTokens.create(p.id, { expiresIn: 60 });
    expect(pt).toMatchObject({ expires_in: 60, scopes: expect.arrayContaining(["sdk:state-read"]) });
    const mine = new PatientStateClient({ baseUrl: base, token: pt.access_token });
    expect((await mine.state.logs(p.id)).count).toBe(1);
    expect(await mine.logs(p.id).count()).toBe(1);
    await expect(mine.state.stable(q.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(new PatientStateClient({ baseUrl: base }).auth.token("nope")).rejects.toBeInstanceOf(AuthenticationError);
  });
});

describe("client: operations reads", () => {
  it("reads the audit trail, dead letters and health", async () => {
    const audit = await pss.admin.audit({ limit: 5 });
    expect(audit.entries.length).toBeGreaterThan(0);
    expect(audit.entries[0]).toHaveProperty("route");
    expect(await pss.admin.deadLetters()).toMatchObject({ count: 0, dead_letters: [], next_cursor: null });
    expect(await pss.admin.health()).toBeTypeOf("object");
  });

  it("creates an organization with the bootstrap key", async () => {
    const org = await pss.admin.createOrganization("Client Clinic");
    const orgClient = new PatientStateClient({ baseUrl: base, apiKey: org.api_key });
    expect((await orgClient.projects.list()).map((p) => p.slug)).toEqual(["default"]);
  });
});

describe("client: ingestion", () => {
  const routes = () => t.app.hasRoute({ method: "POST", url: "/v1/ingestion/jobs" });

  it("uploads a file with progress, runs the job to confirmation, confirms it and refuses a reused job key", async (ctx) => {
    if (!routes()) ctx.skip();
    const dir = mkdtempSync(join(tmpdir(), "pss-client-"));
    const file = join(dir, "history.jsonl");
    const rows = [
      { type: "patient", data: { first_name: "Hist", external_identifiers: [{ system: "mrn", value: "H-1" }] } },
      { type: "log", data: { event_type: "user_login", patient_id: "H-1", timestamp: "2026-01-02T10:00:00Z", payload: {} } },
      { type: "log", data: { event_type: "user_login", patient_id: "H-1", timestamp: "2026-01-01T10:00:00Z", payload: {} } },
    ];
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const seen: number[] = [];
    const up = await pss.ingestion.uploadFile(file, { onProgress: (p) => seen.push(p.loaded) });
    expect(up.bytes).toBe(statSync(file).size);
    expect(seen.at(-1)).toBe(up.bytes);
    const job = await pss.ingestion.createJob({ s3_key: up.s3_key, idempotency_key: "client-hist-1" });
    const states: string[] = [];
    const review = await pss.ingestion.waitForJob(job.job_id, { intervalMs: 50, timeoutMs: 20_000, onProgress: (j) => states.push(j.stage) });
    expect(review).toMatchObject({ status: "awaiting_confirmation", stage: "AWAITING_CONFIRMATION", logs_total: 2 });
    expect(states.length).toBeGreaterThan(0);
    expect((await pss.ingestion.listJobs()).jobs.map((j) => j.job_id)).toContain(job.job_id);
    expect((await pss.ingestion.getJob(job.job_id)).job_id).toBe(job.job_id);
    await expect(pss.ingestion.createJob({ s3_key: up.s3_key, idempotency_key: "client-hist-1" })).rejects.toBeInstanceOf(ConflictError);
    await pss.ingestion.confirm(job.job_id);
    const done = await pss.ingestion.waitForJob(job.job_id, { intervalMs: 50, timeoutMs: 30_000, stopAtConfirmation: false });
    expect(done.status).toBe("completed");
    const patient = await pss.patients.findByExternalId("mrn", "H-1");
    expect(await pss.logs(patient!.id).count()).toBe(2);
    const again = await pss.ingestion.retryBackfill(job.job_id).catch((e: unknown) => e);
    expect(again instanceof Error ? (again as { status_code?: number }).status_code : (again as { job_id: string }).job_id).toBeDefined();
    rmSync(dir, { recursive: true, force: true });
  });

  it("cancels a job created from inline records", async (ctx) => {
    if (!routes()) ctx.skip();
    const job = await pss.ingestion.createJob({ records: [{ type: "patient", data: { first_name: "Inline", external_identifiers: [{ system: "mrn", value: "I-1" }] } }] });
    await pss.ingestion.waitForJob(job.job_id, { intervalMs: 50, timeoutMs: 20_000 });
    expect(await pss.ingestion.cancel(job.job_id, { rollback: true })).toMatchObject({ job_id: job.job_id, rollback_on_cancel: true });
    expect(await pss.ingestion.waitForJob(job.job_id, { intervalMs: 50, timeoutMs: 20_000, stopAtConfirmation: false })).toMatchObject({ status: "cancelled", patients_rolled_back: 1 });
  });

  it("reviews a job before confirming it: removes a patient, skips the backfill, and finds the job by its key a page at a time", async (ctx) => {
    if (!routes()) ctx.skip();
    const login = (ref: string, day: number) => ({ type: "log" as const, data: { event_type: "user_login", patient_id: ref, timestamp: `2026-02-0${day}T10:00:00Z`, payload: {} } });
    const job = await pss.ingestion.createJob({
      idempotency_key: "client-review-1",
      records: [
        { type: "patient", data: { first_name: "Kept", external_identifiers: [{ system: "mrn", value: "R-1" }] } },
        { type: "patient", data: { first_name: "Dropped", external_identifiers: [{ system: "mrn", value: "R-2" }] } },
        login("R-1", 1), login("R-2", 2), login("R-2", 3),
      ],
    });
    const review = await pss.ingestion.waitForJob(job.job_id, { intervalMs: 50, timeoutMs: 20_000 });
    expect(review).toMatchObject({ status: "awaiting_confirmation", logs_processed: 3, patient_replay_statuses: expect.any(Object) });
    const dropped = (await pss.patients.findByExternalId("mrn", "R-2"))!.id;
    const kept = (await pss.patients.findByExternalId("mrn", "R-1"))!.id;
    const after = await pss.ingestion.removePatient(job.job_id, dropped);
    expect(after).toMatchObject({ patients_removed: 1, logs_removed: 2, logs_processed: 1, patient_log_counts: { [kept]: 1 } });
    expect(await pss.patients.findByExternalId("mrn", "R-2")).toBeNull();
    expect(await pss.ingestion.patchJob(job.job_id, { skip_backfill: true })).toMatchObject({ skip_backfill: true, backfill_status: "skipped" });
    const page = await pss.ingestion.listJobs({ idempotency_key: "client-review-1", status: "awaiting_confirmation", page: 1, pageSize: 1 });
    expect(page).toMatchObject({ total: 1, page: 1, page_size: 1, has_more: false });
    expect(page.jobs[0]!.job_id).toBe(job.job_id);
    const preview = await pss.ingestion.previewJob(job.job_id, { limit: 20 });
    expect(preview.patients.map((p) => [p.patient_id, p.logs_staged, p.modules.length > 0])).toEqual([[kept, 1, true]]);
    await pss.ingestion.confirm(job.job_id);
    await expect(pss.ingestion.previewJob(job.job_id)).rejects.toBeInstanceOf(ConflictError);
    const done = await pss.ingestion.waitForJob(job.job_id, { intervalMs: 50, timeoutMs: 30_000, stopAtConfirmation: false });
    expect(done).toMatchObject({ status: "completed", stage: "REPLAYING", backfill_status: "skipped", logs_processed: 1, logs_replayed: 1, patient_replay_statuses: { [kept]: "completed" } });
    await expect(pss.ingestion.patchJob(job.job_id, { skip_backfill: false })).rejects.toBeInstanceOf(ConflictError);
    await expect(pss.ingestion.removePatient(job.job_id, kept)).rejects.toBeInstanceOf(ConflictError);
  });
});
