import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonKv } from "../../../infra/nats/json-kv.js";
import { scanKeys } from "../../../infra/redis/connection.js";
import { startStack, type TestStack } from "../../support/stack.js";
import { sdkClient, sdkOutcome, type SdkClient } from "../../support/olira-sdk.js";

/**
 * DELETE /v1/projects/{p} as the SDK sends it (no body, answer ignored; olira-compat §9):
 * a deprecated project's data goes from every store (JetStream, Redis, ClickHouse, KV,
 * object store), another project's stays, and a deletion cut short is finished by
 * sending the DELETE again.
 */

let t: TestStack;
let sdk: SdkClient;
const ORG = "org_default";
beforeAll(async () => {
  t = await startStack();
  sdk = sdkClient(t.app, t.adminKey);
});
afterAll(async () => {
  await t?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`${what}: not reached in time (last: ${JSON.stringify(v)})`);
    await sleep(50);
  }
}

interface Seeded {
  project: { id: string; slug: string };
  pid: string;
  jobId: string;
  keyId: string;
}

/** A project holding data in every store: a patient with logs, read state, a queried log, an ingestion job, an upload URL, a dead letter, a bound key. */
async function seed(slug: string): Promise<Seeded> {
  const project = (await sdk.post("/v1/projects", { name: `Project ${slug}`, slug, environment: "dev" })).json();
  const inside = sdkClient(t.app, t.adminKey, slug);
  const pid = (await inside.post("/v1/patients", { first_name: "Del", sex: "unknown", timezone: "UTC", external_identifiers: [{ system: "mrn", value: `mrn-${slug}` }] })).json().id;
  const log = { log_type: "symptom_report", patient_id: pid, timestamp: "2026-03-01T10:00:00Z", idempotency_key: `idem-${slug}`, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 6 }] } };
  expect((await inside.post("/v1/logs/batch", { logs: [log] })).json().accepted).toBe(1);
  expect((await inside.get(`/v1/state/${pid}/event-modules/symptoms`)).json().payload.symptoms[0]).toMatchObject({ current_score: 6 });
  expect((await inside.post(`/v1/state/${pid}/logs/query`, { count: true })).json()).toEqual({ count: 1 });
  const records = [
    { type: "patient", data: { first_name: "Imported", external_identifiers: [{ system: "mrn", value: `imp-${slug}` }] } },
    { type: "log", data: { event_type: "symptom_report", patient_id: `imp-${slug}`, timestamp: "2026-02-01T10:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "fatigue", score: 3 }] } } },
  ];
  const job = (await inside.post("/v1/ingestion/jobs", { records, idempotency_key: `job-${slug}`, require_confirmation: true })).json();
  await until("job awaiting confirmation", async () => (await inside.get(`/v1/ingestion/jobs/${job.job_id}`)).json().status, (s) => s === "awaiting_confirmation");
  expect((await inside.post("/v1/ingestion/upload-url")).statusCode).toBe(200);
  const { names, jsm } = t.services.topology;
  await t.services.publisher.publish(names.ingestSubject(ORG, project.id), new TextEncoder().encode("not a log"));
  await until("dead letter", () => jsm.streams.getMessage(names.deadLetterStream, { last_by_subj: names.deadLetterSubject(ORG, project.id) }).catch(() => null), (m) => m !== null);
  const key = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: `key ${slug}`, scopes: ["sdk:state-read"], project: slug } })).json();
  return { project, pid, jobId: job.job_id, keyId: key.id };
}

/** Where the project's data could be, store by store: what each one still holds of it. */
async function traces(s: Seeded): Promise<Record<string, number>> {
  const { names, jsm, kv, uploads } = t.services.topology;
  const p = s.project.id;
  const out: Record<string, number> = {};
  for (const { stream, filter } of [...names.projectSubjects(ORG, p), { stream: names.stagingStream, filter: names.stagingSubjectsOfJob(s.jobId) }]) {
    const info = await jsm.streams.info(stream, { subjects_filter: filter });
    out[`jetstream ${filter}`] = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  }
  const redisKeys = await scanKeys(t.services.redis, `${t.config.namespace}:*`);
  out["redis keys of the project"] = redisKeys.filter((k) => k.includes(p)).length;
  out["redis keys of its patient"] = redisKeys.filter((k) => k.includes(s.pid) && !k.includes(":vw:")).length;
  // Apart: the engine renders views a while after the last log (PSS_VIEW_DEBOUNCE_MS), whenever that falls.
  out["redis views of its patient"] = redisKeys.filter((k) => k.includes(s.pid) && k.includes(":vw:")).length;
  const ch = await t.services.clickhouse.client!.query({ query: `SELECT count() AS n FROM ${t.config.namespace}.logs WHERE project_id = {p:String}`, query_params: { p }, format: "JSONEachRow" });
  out["clickhouse rows"] = Number((await ch.json<{ n: string }>())[0]!.n);
  for (const b of ["patients", "externalIds", "ingestionJobs", "ingestionKeys"] as const) out[`kv ${b}`] = (await new JsonKv(kv[b]).keys(`${p}.*`)).length;
  const tokens = new JsonKv<{ project_id: string }>(kv.uploadTokens);
  out["kv upload tokens"] = (await Promise.all((await tokens.keys()).map((k) => tokens.get(k)))).filter((v) => v?.value.project_id === p).length;
  out["kv project record"] = (await new JsonKv(kv.projects).get(p)) ? 1 : 0;
  const slugs = new JsonKv<{ project_id: string }>(kv.slugs);
  out["kv slug claims"] = (await Promise.all((await slugs.keys(`${ORG}.*`)).map((k) => slugs.get(k)))).filter((v) => v?.value.project_id === p).length;
  out["stored files"] = (await uploads.list()).filter((o) => o.name.includes(`/${p}/`)).length;
  const key = await t.services.apiKeys.get(s.keyId);
  out["live bound keys"] = key && !key.revoked_at ? 1 : 0;
  return out;
}

describe("DELETE of a deprecated project", () => {
  let doomed: Seeded;
  let kept: Seeded;
  let keptBefore: Record<string, number>;

  beforeAll(async () => {
    doomed = await seed("doomed");
    kept = await seed("kept");
    // The inline file of the kept project's job is still there; the other stores all hold something.
    keptBefore = await traces(kept);
  });

  it("erases its data from JetStream, Redis, ClickHouse, KV and the object store, and leaves another project's alone", async () => {
    const before = await traces(doomed);
    // Each store held something of the project, so the erasure below is proven, not assumed
    // (an upload URL's file is never stored: the URL was issued, not used).
    for (const [where, n] of Object.entries(before)) {
      if (where.includes(".logid.") || where.includes(".ingest.") || where.includes("views")) continue;
      expect(n, where).toBeGreaterThan(0);
    }
    expect((await sdk.post("/v1/projects/doomed/deprecate")).statusCode).toBe(200);
    const r = await sdk.delete("/v1/projects/doomed");
    expect(r.statusCode).toBe(204);
    expect(r.body).toBe("");
    expect(sdkOutcome(r.statusCode)).toBe("ok");

    const after = await traces(doomed);
    for (const [where, n] of Object.entries(after)) expect(n, where).toBe(0);
    const { ["redis views of its patient"]: _views, ...keptAfter } = await traces(kept);
    const { ["redis views of its patient"]: _viewsBefore, ...keptThen } = keptBefore;
    expect(keptAfter).toEqual(keptThen);
    const inKept = sdkClient(t.app, t.adminKey, "kept");
    expect((await inKept.get(`/v1/state/${kept.pid}/event-modules/symptoms`)).json().payload.symptoms[0]).toMatchObject({ current_score: 6 });
    expect((await inKept.post(`/v1/state/${kept.pid}/logs/query`, { count: true })).json()).toEqual({ count: 1 });
  });

  it("answers 404 for the project afterwards, frees its slug, and keeps the audit trail of what was done in it", async () => {
    expect((await sdk.get(`/v1/projects/${doomed.project.id}`)).statusCode).toBe(404);
    expect((await sdk.get("/v1/projects/doomed")).statusCode).toBe(404);
    expect((await sdk.delete("/v1/projects/doomed")).statusCode).toBe(404);
    expect((await sdk.get("/v1/projects")).json().data.map((p: { id: string }) => p.id)).not.toContain(doomed.project.id);
    const reborn = await sdk.post("/v1/projects", { name: "Doomed again", slug: "doomed" });
    expect(reborn.statusCode).toBe(201);
    expect(reborn.json().id).not.toBe(doomed.project.id);
    expect((await sdkClient(t.app, t.adminKey, "doomed").get("/v1/patients")).json().total).toBe(0);
    const audit = (await t.app.inject({ method: "GET", url: `/v1/audit?project_id=${doomed.project.id}&limit=1000`, headers: t.auth })).json();
    expect(audit.entries.some((e: { route: string }) => e.route === "/v1/logs/batch")).toBe(true);
  });
});

describe("a deletion cut short", () => {
  it("refuses a restore (409) and is finished by sending the DELETE again", async () => {
    const s = await seed("halfway");
    await sdk.post("/v1/projects/halfway/deprecate");
    // ClickHouse fails once, after the logs left JetStream and before Redis and KV were touched.
    const erase = t.services.logQuery.eraseProject.bind(t.services.logQuery);
    t.services.logQuery.eraseProject = async () => {
      t.services.logQuery.eraseProject = erase;
      throw Object.assign(new Error("ClickHouse went away"), { statusCode: 503 });
    };
    const first = await sdk.delete("/v1/projects/halfway");
    expect(first.statusCode).toBeGreaterThanOrEqual(500);
    expect(sdkOutcome(first.statusCode)).toBe("retry");
    const midway = await traces(s);
    expect(midway[`jetstream ${t.services.topology.names.projectSubjects(ORG, s.project.id)[0]!.filter}`]).toBe(0);
    expect(midway["clickhouse rows"]).toBe(1);
    expect(midway["kv project record"]).toBe(1);

    const restore = await sdk.post("/v1/projects/halfway/restore");
    expect(restore.statusCode).toBe(409);
    expect(restore.json()).toMatchObject({ error_type: "conflict_error", details: [{ type: "project_being_deleted" }] });
    expect(restore.json().message).toContain("send DELETE");
    expect((await sdk.get("/v1/projects/halfway")).json()).toMatchObject({ status: "deprecated" });

    expect((await sdk.delete("/v1/projects/halfway")).statusCode).toBe(204);
    for (const [where, n] of Object.entries(await traces(s))) expect(n, where).toBe(0);
  });
});
