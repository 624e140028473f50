import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AuthenticationError, AuthorizationError, ConflictError, NetworkError, NotFoundError, PatientStateClient, RateLimitError, ServerError,
} from "../../client/index.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let base: string;
let pss: PatientStateClient;

beforeAll(async () => {
  t = await startStack();
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  pss = new PatientStateClient({ baseUrl: base, apiKey: t.adminKey });
});
afterAll(async () => {
  await t?.close();
});

/** Polls until `check` holds: revocations reach the caches through a KV watch. */
async function eventually(check: () => Promise<boolean>, ms = 3_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

const body = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

/** A stand-in in front of the service: `script` answers the first requests, the rest go through to the service. */
async function frontServer(script: ((res: import("node:http").ServerResponse) => void)[]): Promise<{ url: string; hits: () => number; close: () => Promise<void> }> {
  let hits = 0;
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const step = script[hits++];
    const payload = await body(req);
    if (step) return step(res);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length"].includes(k))) as Record<string, string>;
    const up = await fetch(base + req.url, { method: req.method, headers, body: payload.length > 0 ? payload : undefined });
    res.writeHead(up.status, { "content-type": up.headers.get("content-type") ?? "application/json" });
    res.end(Buffer.from(await up.arrayBuffer()));
  };
  const server: Server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, hits: () => hits, close: () => new Promise((r) => server.close(() => r())) };
}

const specError = (status: number, error_type: string, extra: Record<string, string> = {}, details: unknown[] = []) => (res: import("node:http").ServerResponse) => {
  res.writeHead(status, { "content-type": "application/json", ...extra });
  res.end(JSON.stringify({ error: true, status_code: status, error_type, message: `scripted ${status}`, details, timestamp: new Date().toISOString() }));
};

describe("client: retries and network failures", () => {
  it("retries 5xx with backoff and succeeds when the service recovers", async () => {
    const created = await pss.patients.create({ first_name: "Before" });
    const front = await frontServer([specError(503, "server_error"), specError(503, "server_error")]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retryBaseMs: 20 });
    const p = await c.patients.update(created.id, { first_name: "Retry" });
    expect(front.hits()).toBe(3);
    expect((await pss.patients.get(p.id)).first_name).toBe("Retry");
    await front.close();
  });

  it("keeps a logger's batch queued through failed sends and delivers it once", async () => {
    const p = (await pss.patients.create()).id;
    const front = await frontServer([specError(503, "server_error"), specError(502, "server_error")]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 0 });
    const logger = c.logs.logger({ flushIntervalMs: 60_000 });
    await logger.log({ log_type: "user_login", patient_id: p, timestamp: "2026-07-01T10:00:00Z", payload: {} });
    await logger.flush();
    await logger.flush();
    expect(logger.stats).toMatchObject({ queued: 1, sent: 0 });
    await logger.close();
    expect(logger.stats).toMatchObject({ queued: 0, sent: 1, accepted: 1 });
    expect(await pss.logs(p).count()).toBe(1);
    await front.close();
  });

  it("waits between a closing logger's tries of a failing batch instead of sending them back to back", async () => {
    const p = (await pss.patients.create()).id;
    const front = await frontServer([specError(503, "server_error"), specError(503, "server_error")]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 0 });
    const logger = c.logs.logger({ flushIntervalMs: 60_000 });
    await logger.log({ log_type: "user_login", patient_id: p, timestamp: "2026-07-02T10:00:00Z", payload: {} });
    const started = Date.now();
    await logger.close();
    // Tries after 0, 250 and 500 ms: the third goes through.
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(front.hits()).toBe(3);
    expect(logger.stats).toMatchObject({ queued: 0, sent: 1, accepted: 1 });
    await front.close();
  });

  it("honours Retry-After on 429", async () => {
    const detail = [{ type: "rate_limit", message: "slow down", retry_after: 1 }];
    const front = await frontServer([specError(429, "server_error", { "retry-after": "1" }, detail)]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retryBaseMs: 1 });
    const started = Date.now();
    expect((await c.projects.list()).map((p) => p.slug)).toContain("default");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(front.hits()).toBe(2);
    await front.close();
  });

  it("gives up with typed errors once the retries are spent", async () => {
    const detail = [{ type: "rate_limit", message: "slow down", retry_after: 0 }];
    const front = await frontServer([specError(500, "internal_server_error"), specError(500, "internal_server_error"), specError(429, "server_error", {}, detail), specError(429, "server_error", {}, detail)]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 1, retryBaseMs: 1 });
    const e5 = await c.projects.list().catch((e: unknown) => e);
    expect(e5).toBeInstanceOf(ServerError);
    expect(e5).toMatchObject({ status_code: 500, error_type: "internal_server_error" });
    const e429 = await c.projects.list().catch((e: unknown) => e);
    expect(e429).toBeInstanceOf(RateLimitError);
    expect((e429 as RateLimitError).retryAfter).toBe(0);
    expect(front.hits()).toBe(4);
    await front.close();
  });

  it("surfaces a closed port as a NetworkError after retrying", async () => {
    const closed = await frontServer([]);
    await closed.close();
    const c = new PatientStateClient({ baseUrl: closed.url, apiKey: "k", retries: 2, retryBaseMs: 5 });
    const err = await c.patients.get("pat_x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).message).toMatch(/ECONNREFUSED/);
    expect(err).toMatchObject({ status_code: 0, error_type: "network_error" });
  });

  it("treats an attempt over timeoutMs as a network failure", async () => {
    const front = await frontServer([() => undefined]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 0, timeoutMs: 100 });
    await expect(c.admin.health()).rejects.toThrow(/no answer within 100 ms/);
    await front.close().catch(() => undefined);
  });
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
    await eventually(async () => (await reader.query().count().catch((e: unknown) => e)) instanceof AuthenticationError);
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
