import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startStack, type TestStack } from "../support/stack.js";
import { parsePrometheusText, samplesOf, total, type Family } from "../support/prom-text.js";
import { buildApp } from "../../app/http/app.js";
import { serveMetrics } from "../../app/metrics-server.js";
import { MemberObserver } from "../../app/observe.js";
import { ensureLeaseBucket } from "../../infra/nats/lease-bucket.js";
import { Membership } from "../../infra/nats/membership.js";

/**
 * GET /metrics of the service built in-process (role "all": the write path, the state
 * engine and the projector in one process), and the instance /healthz reports.
 */

let t: TestStack;
const MARK = `zq${randomBytes(6).toString("hex")}`;

async function scrape(): Promise<{ text: string; families: Map<string, Family> }> {
  const r = await t.app.inject({ method: "GET", url: "/metrics" });
  expect(r.statusCode).toBe(200);
  expect(r.headers["content-type"]).toBe("text/plain; version=0.0.4; charset=utf-8");
  return { text: r.body, families: parsePrometheusText(r.body) };
}

const symptom = (patient_id: string, minute: number) => ({
  log_type: "symptom_report",
  patient_id,
  timestamp: new Date(Date.UTC(2026, 2, 1, 10, minute)).toISOString(),
  idempotency_key: `${MARK}-${minute}`,
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 4 }] },
});

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "50" });
});

afterAll(async () => {
  await t?.close();
});

describe("GET /metrics", () => {
  it("answers without credentials in the Prometheus text format, with the process's role and pid on every series of its own", async () => {
    const { families } = await scrape();
    for (const name of ["pss_logs_accepted_total", "pss_logs_rejected_total", "pss_logs_applied_total", "pss_replays_total", "pss_patient_actor_failures_total", "pss_http_request_duration_seconds", "pss_lag_messages", "pss_lease_changes_total", "pss_leases_held", "process_cpu_user_seconds_total", "nodejs_eventloop_lag_seconds"]) {
      expect(families.has(name), name).toBe(true);
    }
    expect(families.get("pss_http_request_duration_seconds")!.type).toBe("histogram");
    expect(families.get("pss_logs_accepted_total")!.type).toBe("counter");
    for (const s of samplesOf(families, "process_cpu_user_seconds_total")) expect(s.labels).toEqual({ role: "all", pid: String(process.pid) });
    // Alone on its namespace, the service holds every lease: 16 partitions, the projector and the jobs.
    expect(samplesOf(families, "pss_lease_changes_total").map((s) => [s.labels.kind, s.value]).sort()).toEqual([["acquired", 18], ["lost", 0], ["released", 0]]);
    expect(total(families, "pss_leases_held")).toBe(18);
  });

  it("counts logs accepted and rejected by source and code, then applied, and times requests by route pattern", async () => {
    const before = (await scrape()).families;
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: `Ada${MARK}`, external_identifiers: [{ system: `sys${MARK}`, value: `v${MARK}` }] } })).json().id as string;
    const logs = [symptom(pid, 0), symptom(pid, 1), symptom(pid, 2), { ...symptom(pid, 3), payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 99 }] } }, { ...symptom(pid, 4), log_type: "no_such_type" }];
    const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } });
    expect(r.json()).toMatchObject({ accepted: 3, failed: 2 });
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/symptoms`, headers: t.auth })).statusCode).toBe(200);
    // An id in a URL no route matches, and in one a route matches, must not become a label.
    expect((await t.app.inject({ method: "GET", url: `/v1/nowhere/${pid}` })).statusCode).toBe(404);
    expect((await t.app.inject({ method: "GET", url: `/v1/patients/pat_${MARK}`, headers: t.auth })).statusCode).toBe(404);

    const delta = (f: Map<string, Family>, name: string, labels: Record<string, string> = {}) => total(f, name, labels) - total(before, name, labels);
    const after = await eventually(
      async () => (await scrape()).families,
      (f) => delta(f, "pss_logs_applied_total") >= 3,
      10_000,
    );
    expect(delta(after, "pss_logs_accepted_total", { source: "batch" })).toBe(3);
    expect(delta(after, "pss_logs_rejected_total", { source: "batch", reason: "validation_error" })).toBe(1);
    expect(delta(after, "pss_logs_rejected_total", { source: "batch", reason: "unknown_log_type" })).toBe(1);
    expect(delta(after, "pss_logs_applied_total")).toBeGreaterThanOrEqual(3);
    expect(total(after, "pss_http_request_duration_seconds_count", { method: "POST", route: "/v1/logs/batch", status_class: "2xx" })).toBeGreaterThanOrEqual(1);
    expect(total(after, "pss_http_request_duration_seconds_count", { method: "GET", route: "/v1/state/:pid/event-modules/:module_type", status_class: "2xx" })).toBeGreaterThanOrEqual(1);
    expect(total(after, "pss_http_request_duration_seconds_count", { method: "GET", route: "unmatched", status_class: "4xx" })).toBeGreaterThanOrEqual(1);
    expect(total(after, "pss_http_request_duration_seconds_count", { method: "GET", route: "/v1/patients/:id", status_class: "4xx" })).toBeGreaterThanOrEqual(1);
    const buckets = samplesOf(after, "pss_http_request_duration_seconds_bucket", { route: "/v1/logs/batch" });
    expect(buckets.find((b) => b.labels.le === "+Inf")?.value).toBe(total(after, "pss_http_request_duration_seconds_count", { route: "/v1/logs/batch" }));

    const { text } = await scrape();
    for (const secret of [pid, MARK, "org_default", "prj_default", t.adminKey]) expect(text).not.toContain(secret);
  });

  it("reports each durable consumer's lag, which falls to 0 once the engine and projector have caught up", async () => {
    const ns = t.config.namespace;
    const lag = await eventually(
      async () => (await scrape()).families,
      (f) => samplesOf(f, "pss_lag_messages").length >= 18 && total(f, "pss_lag_messages", { consumer: `${ns}_state_p0` }) === 0 && total(f, "pss_lag_messages", { consumer: `${ns}_clickhouse` }) === 0,
      15_000,
    );
    const consumers = samplesOf(lag, "pss_lag_messages").map((s) => `${s.labels.stream} ${s.labels.consumer}`).sort();
    const upper = ns.toUpperCase();
    const partitions = Array.from({ length: 16 }, (_, p) => `${upper}_LOGS ${ns}_state_p${p}`);
    expect(consumers).toEqual([`${upper}_INGEST ${ns}_device_feed`, `${upper}_LOGS ${ns}_clickhouse`, ...partitions].sort());
    // One series per partition, labelled with it; the tenure's epoch is not in the name.
    expect(samplesOf(lag, "pss_lag_messages", { consumer: `${ns}_state_p3` })[0]!.labels.partition).toBe("3");
    expect(total(lag, "pss_lag_messages", { stream: `${upper}_LOGS` })).toBe(0);
  });

  it("is left out of the OpenAPI document: it is for Prometheus, not for the API's clients", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths)).not.toContain("/metrics");
  });
});

describe("GET /healthz", () => {
  it("names the process with the partitions it applies and the leases it holds", async () => {
    const r = await t.app.inject({ method: "GET", url: "/healthz" });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ status: "ok", down: [], instance: { role: "all", pid: process.pid, partitions: Array.from({ length: 16 }, (_, p) => p) } });
    expect(body.instance.leases.map((l: { resource: string }) => l.resource).sort()).toEqual([...Array.from({ length: 16 }, (_, p) => `p.${p}`), "jobs", "projector"].sort());
    expect(body.instance.leases.every((l: { epoch: number }) => l.epoch > 0)).toBe(true);
    expect(body.processes).toEqual([body.instance]);
  });
});

describe("PSS_METRICS_PORT", () => {
  it("serves /metrics and /healthz on a port of their own, and nothing else there", async () => {
    const server = await serveMetrics(new MemberObserver(t.services), 0, "127.0.0.1");
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const m = await fetch(`${base}/metrics`);
      expect(m.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      expect(total(parsePrometheusText(await m.text()), "pss_logs_accepted_total", { source: "batch" })).toBeGreaterThan(0);
      const h = await fetch(`${base}/healthz`);
      expect(h.status).toBe(200);
      expect(await h.json()).toMatchObject({ status: "ok", instance: { role: "all", pid: process.pid } });
      expect((await fetch(`${base}/v1/patients`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it("takes /metrics off the API's port when set", async () => {
    const off = await buildApp({ ...t.services, config: { ...t.services.config, metricsPort: 9464 } }, { logger: false });
    try {
      expect((await off.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(404);
      expect((await off.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    } finally {
      await off.close();
    }
  });
});

describe("with a second member", () => {
  const RESOURCES = [...Array.from({ length: 16 }, (_, p) => `p.${p}`), "projector", "jobs"];
  const changes = (f: Map<string, Family>) => Object.fromEntries(samplesOf(f, "pss_lease_changes_total").map((x) => [x.labels.kind, x.value]));
  const partitions = async () => (await t.app.inject({ method: "GET", url: "/healthz" })).json().instance.partitions as number[];

  it("hands part of its leases over to a member that joins, counts the hand-overs, and takes them back when it leaves", async () => {
    const before = changes((await scrape()).families);
    const kv = await ensureLeaseBucket(t.services.nc, t.config.namespace, t.config.leaseTtlMs);
    const other = await Membership.join({ kv, member: { id: "second-member", role: "worker" }, resources: RESOURCES, ttlMs: t.config.leaseTtlMs });
    try {
      // A rebalance releases before the joiner acquires: wait until every partition has its holder again.
      const theirsNow = () => other.held().flatMap((l) => (l.resource.startsWith("p.") ? [Number(l.resource.slice(2))] : []));
      const settled = (ps: number[]) => other.held().length > 0 && ps.length < 16 && new Set([...ps, ...theirsNow()]).size === 16;
      await eventually(partitions, settled, 10_000);
      expect(other.held().length, "the second member holds some leases").toBeGreaterThan(0);
      const shared = (await scrape()).families;
      const c = changes(shared);
      expect(c.released).toBeGreaterThan(before.released);
      expect(c.acquired! - c.released! - c.lost!).toBe(total(shared, "pss_leases_held"));
      const mine = await partitions();
      const theirs = theirsNow();
      expect([...mine, ...theirs].sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, p) => p));
    } finally {
      await other.stop();
    }
    expect(await eventually(partitions, (ps) => ps.length === 16, 10_000), "the service works every partition again").toHaveLength(16);
    expect(total((await scrape()).families, "pss_leases_held")).toBe(18);
  });
});
