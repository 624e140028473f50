import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NetworkError, PatientStateClient, RateLimitError, ServerError, type IngestionJob, type LogInput, type LoggerFailure } from "../../client/index.js";
import { lossyProxy, specAnswer, type LossyProxy, type Step } from "../support/lossy-proxy.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let base: string;
let pss: PatientStateClient;
let dir: string;
const proxies: LossyProxy[] = [];

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  pss = new PatientStateClient({ baseUrl: base, apiKey: t.adminKey });
  dir = mkdtempSync(join(tmpdir(), "pss-retries-"));
});
afterAll(async () => {
  for (const p of proxies) await p.close();
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A client behind a proxy that follows `plan`. */
async function behind(plan: (method: string, path: string, seen: number) => Step, o: { maxRetryDelayMs?: number; retries?: number } = {}) {
  const proxy = await lossyProxy(base, plan);
  proxies.push(proxy);
  return { proxy, c: new PatientStateClient({ baseUrl: proxy.url, apiKey: t.adminKey, retryBaseMs: 5, ...o }) };
}

/** The first request of this method and path gets `step`; the rest pass. */
const firstOf = (method: string, path: string | RegExp, step: Step) => (m: string, p: string, seen: number): Step =>
  m === method && (typeof path === "string" ? p === path : path.test(p)) && seen === 0 ? step : "pass";

const login = (patient: string, day: number, key?: string): LogInput => ({
  log_type: "user_login",
  patient_id: patient,
  timestamp: `2026-07-0${day}T10:00:00Z`,
  payload: {},
  ...(key ? { idempotency_key: key } : {}),
});

const historyRecords = (mrn: string) => [
  { type: "patient" as const, data: { first_name: "Hist", external_identifiers: [{ system: "mrn", value: mrn }] } },
  { type: "log" as const, data: { event_type: "user_login", patient_id: mrn, timestamp: "2026-01-01T10:00:00Z", payload: {} } },
];

const ingestion = () => t.app.hasRoute({ method: "POST", url: "/v1/ingestion/jobs" });

describe("client: writes that are not idempotent are not sent twice", () => {
  it("patients.create: a lost answer is a NetworkError, and the patient exists once", async () => {
    const { c, proxy } = await behind(firstOf("POST", "/v1/patients", "lose-answer"));
    const err = await c.patients.create({ first_name: "Once", external_identifiers: [{ system: "mrn", value: "ONCE-1" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(proxy.count("POST", "/v1/patients")).toBe(1);
    expect((await pss.patients.list({ system: "mrn", value: "ONCE-1" })).total).toBe(1);
  });

  it("patients.batchCreate: a 502 after the write is not retried", async () => {
    const { c, proxy } = await behind(firstOf("POST", "/v1/patients/batch", "502-after"));
    const err = await c.patients.batchCreate([{ external_identifiers: [{ system: "mrn", value: "BATCH-1" }] }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(proxy.count("POST", "/v1/patients/batch")).toBe(1);
    expect((await pss.patients.list({ system: "mrn", value: "BATCH-1" })).total).toBe(1);
  });

  it("apiKeys.create: a lost answer makes one key, not two", async () => {
    const { c, proxy } = await behind(firstOf("POST", "/v1/api-keys", "lose-answer"));
    await expect(c.apiKeys.create({ name: "lost-once", scopes: ["sdk:state-read"] })).rejects.toBeInstanceOf(NetworkError);
    expect(proxy.count("POST", "/v1/api-keys")).toBe(1);
    expect((await pss.apiKeys.list()).filter((k) => k.name === "lost-once")).toHaveLength(1);
  });

  it("logs.batch: without idempotency keys a lost answer is not retried; with them it is, and reports duplicates", async () => {
    const p = (await pss.patients.create()).id;
    const { c, proxy } = await behind((m, path, seen) => (m === "POST" && path === "/v1/logs/batch" && seen < 2 ? "lose-answer" : "pass"));
    await expect(c.logs.batch([login(p, 1)])).rejects.toBeInstanceOf(NetworkError);
    expect(proxy.count("POST", "/v1/logs/batch")).toBe(1);
    const keyed = await c.logs.batch([login(p, 2, "retry-keyed-1")]);
    expect(keyed).toMatchObject({ accepted: 0, duplicates: 1, failed: 0 });
    expect(proxy.count("POST", "/v1/logs/batch")).toBe(3);
    expect(await pss.logs(p).count()).toBe(2);
  });

  it("a logger without idempotency keys gives up a batch whose send may have stored it, rather than store it twice", async () => {
    const p = (await pss.patients.create()).id;
    const { c, proxy } = await behind(firstOf("POST", "/v1/logs/batch", "502-after"));
    const failures: LoggerFailure[] = [];
    const logger = c.logs.logger({ idempotencyKeys: false, flushIntervalMs: 60_000, onError: (f) => failures.push(f) });
    await logger.log(login(p, 3));
    await logger.close();
    expect(proxy.count("POST", "/v1/logs/batch")).toBe(1);
    expect(failures).toHaveLength(1);
    expect(failures[0]!.reason).toBeInstanceOf(ServerError);
    expect(await pss.logs(p).count()).toBe(1);
  });

  it("patients.delete: a retry's 404 after a lost answer is the delete that worked", async () => {
    const p = (await pss.patients.create()).id;
    const { c, proxy } = await behind(firstOf("DELETE", `/v1/patients/${p}`, "lose-answer"));
    expect(await c.patients.delete(p)).toEqual({ id: p, status: "deleted", permanent: false });
    expect(proxy.count("DELETE")).toBe(2);
  });
});

describe("client: a POST is sent again when the failure proves it was not applied", () => {
  it("retries a create after a 429 and a 503 with Retry-After, but not after a bare 503", async () => {
    const { c, proxy } = await behind((m, p, seen) =>
      m === "POST" && p === "/v1/patients" && seen === 0 ? specAnswer(429, { "retry-after": "0" }, [{ type: "rate_limit", message: "slow down", retry_after: 0 }])
      : m === "POST" && p === "/v1/patients" && seen === 1 ? specAnswer(503, { "retry-after": "0" })
      : m === "POST" && p === "/v1/patients" && seen === 3 ? specAnswer(503)
      : "pass");
    const created = await c.patients.create({ external_identifiers: [{ system: "mrn", value: "RA-1" }] });
    expect(proxy.count("POST", "/v1/patients")).toBe(3);
    expect((await pss.patients.get(created.id)).id).toBe(created.id);
    await expect(c.patients.create()).rejects.toBeInstanceOf(ServerError);
    expect(proxy.count("POST", "/v1/patients")).toBe(4);
  });

  it("retries a create whose connection was refused (nothing was sent)", async () => {
    let calls = 0;
    const refusedOnce: typeof fetch = (input, init) => {
      if (calls++ === 0) {
        const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1"), { code: "ECONNREFUSED" });
        return Promise.reject(new TypeError("fetch failed", { cause }));
      }
      return fetch(input, init);
    };
    const c = new PatientStateClient({ baseUrl: base, apiKey: t.adminKey, retryBaseMs: 5, fetch: refusedOnce });
    const created = await c.patients.create({ external_identifiers: [{ system: "mrn", value: "REFUSED-1" }] });
    expect(calls).toBe(2);
    expect((await pss.patients.list({ system: "mrn", value: "REFUSED-1" })).patients.map((x) => x.id)).toEqual([created.id]);
  });
});

describe("client: ingestion writes after a lost answer", () => {
  it("createJob without a key is not retried; with a key it is, and answers the job the first attempt made", async (ctx) => {
    if (!ingestion()) ctx.skip();
    const { c, proxy } = await behind((m, p, seen) => (m === "POST" && p === "/v1/ingestion/jobs" && (seen === 0 || seen === 1) ? "lose-answer" : "pass"));
    const before = (await pss.ingestion.listJobs({ limit: 1000 })).total;
    await expect(c.ingestion.createJob({ records: historyRecords("JOB-A") })).rejects.toBeInstanceOf(NetworkError);
    const listed = await pss.ingestion.listJobs({ limit: 1000 });
    expect(listed.total).toBe(before + 1);
    const lost = listed.jobs[0]!;
    const job = await c.ingestion.createJob({ records: historyRecords("JOB-B"), idempotency_key: "retried-create-1" });
    expect(proxy.count("POST", "/v1/ingestion/jobs")).toBe(3);
    expect(job).toMatchObject({ job_id: expect.stringMatching(/^job_/), idempotency_key: "retried-create-1" });
    const all = (await pss.ingestion.listJobs({ limit: 1000 })).jobs;
    // A job that failed frees its key (a second job may then take it): the statuses explain a failure here.
    expect(all, JSON.stringify(all.map((j) => [j.job_id, j.status, j.idempotency_key, j.status_message]))).toHaveLength(before + 2);
    expect(all.filter((j) => j.idempotency_key === "retried-create-1").map((j) => j.job_id)).toEqual([job.job_id]);
    for (const id of [lost.job_id, job.job_id]) {
      await pss.ingestion.waitForJob(id, { intervalMs: 50, timeoutMs: 20_000 });
      await pss.ingestion.cancel(id);
    }
  });

  it("confirm: a retry's 409 after a lost answer returns the job the lost attempt confirmed", async (ctx) => {
    if (!ingestion()) ctx.skip();
    const created = await pss.ingestion.createJob({ records: historyRecords("CONF-1") });
    await pss.ingestion.waitForJob(created.job_id, { intervalMs: 50, timeoutMs: 20_000 });
    const { c, proxy } = await behind(firstOf("POST", `/v1/ingestion/jobs/${created.job_id}/confirm`, "lose-answer"));
    const job: IngestionJob = await c.ingestion.confirm(created.job_id);
    expect(proxy.count("POST", `/v1/ingestion/jobs/${created.job_id}/confirm`)).toBe(2);
    expect(job.job_id).toBe(created.job_id);
    expect(["REPLAYING", "BACKFILLING"]).toContain(job.stage);
    const done = await pss.ingestion.waitForJob(created.job_id, { intervalMs: 50, timeoutMs: 30_000, stopAtConfirmation: false });
    expect(done.status).toBe("completed");
  });

  it("waitForJob polls through a service that does not answer for a while (a restart), and gives up past unreachableMs", async (ctx) => {
    if (!ingestion()) ctx.skip();
    const created = await pss.ingestion.createJob({ records: historyRecords("POLL-1") });
    const path = `/v1/ingestion/jobs/${created.job_id}`;
    // No retries of its own: each poll that gets a 502 is the poll loop's to carry on from.
    const { c } = await behind((m, p, seen) => (m === "GET" && p === path && seen < 3 ? "502-after" : "pass"), { retries: 0 });
    const lost: string[] = [];
    const job = await c.ingestion.waitForJob(created.job_id, { intervalMs: 20, timeoutMs: 20_000, onUnreachable: (e) => lost.push(e.name) });
    expect(job.status).toBe("awaiting_confirmation");
    expect(lost.length).toBeGreaterThan(0);
    const { c: down } = await behind((m, p) => (m === "GET" && p === path ? "502-after" : "pass"), { retries: 0 });
    await expect(down.ingestion.waitForJob(created.job_id, { intervalMs: 20, unreachableMs: 300 })).rejects.toBeInstanceOf(ServerError);
    await pss.ingestion.cancel(created.job_id);
  });

  it("confirm: a 409 without a lost answer before it stays a ConflictError", async (ctx) => {
    if (!ingestion()) ctx.skip();
    const created = await pss.ingestion.createJob({ records: historyRecords("CONF-2") });
    await pss.ingestion.waitForJob(created.job_id, { intervalMs: 50, timeoutMs: 20_000 });
    await pss.ingestion.cancel(created.job_id);
    await expect(pss.ingestion.confirm(created.job_id)).rejects.toMatchObject({ status_code: 409 });
  });

  it("uploadFile waits out a 429's Retry-After on the same upload URL", async (ctx) => {
    if (!ingestion()) ctx.skip();
    const file = join(dir, "upload.jsonl");
    writeFileSync(file, historyRecords("UP-1").map((r) => JSON.stringify(r)).join("\n") + "\n");
    const limited = specAnswer(429, { "retry-after": "1" }, [{ type: "rate_limit", message: "slow down", retry_after: 1 }]);
    const { c, proxy } = await behind(firstOf("PUT", /^\/v1\/ingestion\/uploads\//, limited));
    const started = Date.now();
    const up = await c.ingestion.uploadFile(file);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(proxy.count("POST", "/v1/ingestion/upload-url")).toBe(1);
    expect(proxy.count("PUT", "/v1/ingestion/uploads/")).toBe(2);
    expect(up.s3_key).toEqual(expect.any(String));
  });

  it("uploadFile fails at once with RateLimitError when the Retry-After is over maxRetryDelayMs", async (ctx) => {
    if (!ingestion()) ctx.skip();
    const file = join(dir, "upload2.jsonl");
    writeFileSync(file, historyRecords("UP-2").map((r) => JSON.stringify(r)).join("\n") + "\n");
    const limited = specAnswer(429, { "retry-after": "15" }, [{ type: "rate_limit", message: "slow down", retry_after: 15 }]);
    const { c, proxy } = await behind((m, p) => (m === "PUT" && p.startsWith("/v1/ingestion/uploads/") ? limited : "pass"), { maxRetryDelayMs: 1_000 });
    const started = Date.now();
    const err = await c.ingestion.uploadFile(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    expect((err as RateLimitError).retryAfter).toBe(15);
    expect(Date.now() - started).toBeLessThan(900);
    expect(proxy.count("PUT")).toBe(1);
  });
});

describe("client: x-pss-stale", () => {
  it("marks state reads and query results stale, without adding to the wire shape", async () => {
    const p = (await pss.patients.create()).id;
    await pss.logs.batch([login(p, 1)]);
    const fresh = await pss.state.stable(p);
    expect(fresh.stale).toBe(false);
    const { c } = await behind((_m, path) => (path.startsWith("/v1/state/") ? "stale" : "pass"));
    const stable = await c.state.stable(p);
    expect(stable.stale).toBe(true);
    expect(Object.keys(stable)).toEqual(Object.keys(fresh));
    expect(JSON.parse(JSON.stringify(stable))).toEqual(JSON.parse(JSON.stringify(fresh)));
    expect((await c.state.events(p)).stale).toBe(true);
    const rows = await c.logs(p).limit(1);
    expect(rows.stale).toBe(true);
    expect((await pss.logs(p).limit(1)).stale).toBe(false);
  });
});
