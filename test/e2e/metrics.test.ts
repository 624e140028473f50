import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startStack, type TestStack } from "../support/stack.js";
import { parsePrometheusText, samplesOf, total, type Family } from "../support/prom-text.js";
import { buildApp } from "../../app/http/app.js";
import { serveMetrics } from "../../app/metrics-server.js";
import { MemberObserver } from "../../app/observe.js";
import { ensureLeaseBucket } from "../../infra/nats/lease-bucket.js";
import { Membership } from "../../infra/nats/membership.js";
import type { LeaseSource } from "../../infra/metrics/instance-status.js";
import { owners, until } from "../support/leases.js";

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
    // The lease table is not wired in yet: its counts are there, at 0.
    expect(samplesOf(families, "pss_lease_changes_total").map((s) => [s.labels.kind, s.value]).sort()).toEqual([["acquired", 0], ["lost", 0], ["released", 0]]);
    expect(total(families, "pss_leases_held")).toBe(0);
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
      (f) => samplesOf(f, "pss_lag_messages").length >= 3 && total(f, "pss_lag_messages", { consumer: `${ns}_state` }) === 0 && total(f, "pss_lag_messages", { consumer: `${ns}_clickhouse` }) === 0,
      15_000,
    );
    const consumers = samplesOf(lag, "pss_lag_messages").map((s) => `${s.labels.stream} ${s.labels.consumer}`).sort();
    const upper = ns.toUpperCase();
    expect(consumers).toEqual([`${upper}_INGEST ${ns}_device_feed`, `${upper}_LOGS ${ns}_clickhouse`, `${upper}_LOGS ${ns}_state`].sort());
    expect(samplesOf(lag, "pss_lag_messages", { consumer: `${ns}_state` })[0]!.value).toBe(0);
  });

  it("is left out of the OpenAPI document: it is for Prometheus, not for the API's clients", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths)).not.toContain("/metrics");
  });
});

describe("GET /healthz", () => {
  // Until the partitioned engine and the lease table register into Services.instance;
  // "with a lease table" below registers a real one.
  it("names the process with its partitions and leases, empty until the engine and lease table register them", async () => {
    const r = await t.app.inject({ method: "GET", url: "/healthz" });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ status: "ok", down: [], instance: { role: "all", pid: process.pid, partitions: [], leases: [] } });
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

// Last: the membership registered here stays registered, stopped.
describe("with a lease table", () => {
  const TTL = 1_500;
  const RESOURCES = ["p.0", "p.1", "p.2", "projector"];
  const leasePartitions = (m: Membership) => m.held().flatMap((l) => (/^p\.\d+$/.test(l.resource) ? [Number(l.resource.slice(2))] : []));
  const leasesOf = (m: Membership) => m.held().map((l) => ({ resource: l.resource, epoch: l.epoch, since: new Date(l.since).toISOString() })).sort((a, b) => (a.resource < b.resource ? -1 : 1));
  const changes = (f: Map<string, Family>) => Object.fromEntries(samplesOf(f, "pss_lease_changes_total").map((x) => [x.labels.kind, x.value]));

  it("reports the leases a real membership holds, with their epochs, and counts its acquisitions and hand-overs", async () => {
    const kv = await ensureLeaseBucket(t.services.nc, t.config.namespace, TTL);
    const join = (id: string) => Membership.join({ kv, member: { id, role: "worker" }, resources: RESOURCES, ttlMs: TTL, safetyMarginMs: 500 });
    const me = await join(t.services.instance.id);
    let other: Membership | null = null;
    try {
      const source: LeaseSource = me;
      t.services.instance.setLeases(source);
      t.services.instance.setPartitions(() => leasePartitions(me));
      await until(() => me.held().length === RESOURCES.length, 5 * TTL, "the only member holds every lease");
      const alone = (await t.app.inject({ method: "GET", url: "/healthz" })).json();
      expect(alone.instance).toMatchObject({ id: t.services.instance.id, partitions: [0, 1, 2], leases: leasesOf(me) });
      expect(alone.instance.leases.every((l: { epoch: number }) => l.epoch > 0)).toBe(true);
      const first = (await scrape()).families;
      expect(changes(first)).toEqual({ acquired: 4, lost: 0, released: 0 });
      expect(total(first, "pss_leases_held")).toBe(4);

      // A second member joins: this one hands over its share, each a release.
      other = await join("second-member");
      await until(() => [...owners([me, other!], RESOURCES).values()].every((h) => h.length === 1) && other!.held().length > 0, 5 * TTL, "each lease held once, some by the second member");
      const shared = (await scrape()).families;
      const c = changes(shared);
      expect(c.acquired).toBe(4);
      expect(c.released).toBeGreaterThan(0);
      expect(c.acquired - c.released - c.lost).toBe(me.held().length);
      expect(total(shared, "pss_leases_held")).toBe(me.held().length);
      const health = (await t.app.inject({ method: "GET", url: "/healthz" })).json();
      expect(health.instance.leases).toEqual(leasesOf(me));
      expect(health.instance.partitions).toEqual(leasePartitions(me).sort());
    } finally {
      await other?.stop();
      await me.stop();
    }
  });
});
