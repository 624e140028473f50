import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../infra/nats/connection.js";
import { destroyTopology } from "../../infra/nats/topology.js";
import { connectRedis, deleteKeys } from "../../infra/redis/connection.js";
import { eventually } from "../support/stack.js";
import { childrenOf, ensureBuilt, niceness, startServiceProcess, threadPolicies, type LogLine, type ServiceProcess } from "../support/service-process.js";
import { parsePrometheusText, samplesOf, total, type Family } from "../support/prom-text.js";

/**
 * The service as `npm start` runs it, compiled, in processes of its own: PSS_ROLE=all (a
 * supervisor, a background worker at a lower priority, an api process), and PSS_ROLE=api
 * beside PSS_ROLE=worker on one namespace. Logs written through HTTP are applied by the
 * other process, without the in-process hand-over, and none is lost or applied twice when
 * the worker is killed. /metrics and /healthz speak for every process of the member.
 */

const BATCH = 25;

interface Deployment {
  ns: string;
  dataDir: string;
  adminKey: string;
  port: number;
  base: string;
  env(role: string): Record<string, string>;
}

const made: Deployment[] = [];
const started: ServiceProcess[] = [];

function deployment(): Deployment {
  const ns = `t${randomBytes(5).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "pss-roles-"));
  const adminKey = `admin-${randomBytes(16).toString("hex")}`;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const d: Deployment = {
    ns,
    dataDir,
    adminKey,
    port,
    base: `http://127.0.0.1:${port}`,
    env: (role) => ({ PORT: String(port), DATA_DIR: dataDir, PSS_NAMESPACE: ns, PSS_ADMIN_KEY: adminKey, PSS_ROLE: role, LOG_LEVEL: "info", PSS_VIEW_DEBOUNCE_MS: "50" }),
  };
  made.push(d);
  return d;
}

function start(env: Record<string, string>): ServiceProcess {
  const p = startServiceProcess(env);
  started.push(p);
  return p;
}

async function call(d: Deployment, method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; json: any }> {
  const r = await fetch(`${d.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${d.adminKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, json: text ? JSON.parse(text) : undefined };
}

async function health(d: Deployment, base = d.base): Promise<{ status: number; json: any } | null> {
  try {
    const r = await fetch(`${base}/healthz`);
    return { status: r.status, json: await r.json() };
  } catch {
    return null;
  }
}

async function metrics(base: string): Promise<Map<string, Family>> {
  const r = await fetch(`${base}/metrics`);
  expect(r.status).toBe(200);
  return parsePrometheusText(await r.text());
}

/** The roles and pids of the processes whose series a scrape holds. */
const processesIn = (m: Map<string, Family>) => samplesOf(m, "process_start_time_seconds").map((s) => `${s.labels.role} ${s.labels.pid}`).sort();

/** `BATCH` logins of one patient, each with its own idempotency key, from minute `from` on. */
function logins(patient: string, from: number) {
  return Array.from({ length: BATCH }, (_, i) => ({
    log_type: "user_login",
    patient_id: patient,
    timestamp: new Date(Date.UTC(2026, 2, 1, 8, from + i)).toISOString(),
    idempotency_key: `login-${from + i}`,
    payload: {},
  }));
}

async function post(d: Deployment, patient: string, from: number): Promise<void> {
  const r = await call(d, "POST", "/v1/logs/batch", { logs: logins(patient, from) });
  expect(r.status).toBe(200);
  expect(r.json.accepted).toBe(BATCH);
}

/** The patient's login count as the state says it, and whether the read had to answer stale. */
async function loginsApplied(d: Deployment, patient: string): Promise<{ total: number; stale: boolean }> {
  const r = await call(d, "GET", `/v1/state/${patient}/event-modules/engagement`);
  expect(r.status).toBe(200);
  return { total: r.json.payload?.counts?.user_login?.total ?? 0, stale: r.headers.get("x-pss-stale") === "true" };
}

async function loginsQueried(d: Deployment, patient: string): Promise<{ total: number; stale: boolean }> {
  const r = await call(d, "POST", `/v1/state/${patient}/logs/query`, { count: true });
  // A new worker answers queries once it has opened embedded ClickHouse again: until then
  // the api process's query gets a retryable 503 (the query store, or NATS with no responder).
  if (r.status === 503 && ["query_store_unavailable", "backend_unavailable"].includes(r.json.details?.[0]?.type)) return { total: -1, stale: true };
  expect(r.status).toBe(200);
  return { total: r.json.count as number, stale: r.headers.get("x-pss-stale") === "true" };
}

/**
 * Read-your-writes: an answer that is not marked stale holds every log written before it.
 * A stale one is allowed (the wait is bounded, and the worker yields the CPU to the tests
 * running beside), so the read is repeated until one is current.
 */
async function current(read: () => Promise<{ total: number; stale: boolean }>, expected: number): Promise<void> {
  const answers: { total: number; stale: boolean }[] = [];
  await eventually(read, (a) => (answers.push(a), !a.stale), 20_000);
  for (const a of answers) if (!a.stale) expect(a.total).toBe(expected);
  expect(answers.at(-1)).toEqual({ total: expected, stale: false });
}

const isWorkerReady = (l: LogLine) => l.role === "worker" && l.msg === "worker process running the background work";

beforeAll(() => ensureBuilt(), 180_000);

afterAll(async () => {
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill("SIGKILL");
  const nc = await connectNats("nats://127.0.0.1:4222");
  const redis = await connectRedis("redis://127.0.0.1:6379");
  for (const d of made) {
    await destroyTopology(nc, d.ns);
    await deleteKeys(redis, `${d.ns}:*`);
    rmSync(d.dataDir, { recursive: true, force: true });
  }
  await redis.quit();
  await nc.drain();
}, 60_000);

describe("PSS_ROLE=all", () => {
  it("serves HTTP from an api process and runs the background work in a worker process at a lower priority, surviving the worker's death", async () => {
    const d = deployment();
    const svc = start(d.env("all"));
    const firstWorker = await svc.line(isWorkerReady, 60_000);
    const up = await eventually(() => health(d), (h) => h?.status === 200, 60_000);
    expect(up?.json.instance).toMatchObject({ role: "api", pid: expect.any(Number), id: expect.stringContaining(`-${up?.json.instance.pid}-`) });
    const apiPid: number = up!.json.instance.pid;
    const workerPid = firstWorker.pid!;
    expect(childrenOf(svc.proc.pid!).sort()).toEqual([apiPid, workerPid].sort());
    expect(niceness(workerPid)).toBe(Math.min(19, niceness(apiPid) + 10));
    expect(niceness(apiPid)).toBe(niceness(svc.proc.pid!));
    // The worker put itself under SCHED_IDLE (5), every thread of it, unless the supervisor's
    // guard has put it back under the normal policy (0) since, because this busy machine kept
    // it from running (it says so); the api process runs under the normal policy.
    expect(svc.lines.find((l) => l.role === "worker" && /lower scheduling priority/.test(String(l.msg)))).toMatchObject({ scheduler: "idle", niceness: niceness(workerPid) });
    const demoted = (l: LogLine) => l.role === "supervisor" && /could not run under SCHED_IDLE/.test(String(l.msg));
    const policies = new Set(threadPolicies(workerPid));
    if (!(policies.size === 1 && policies.has(5))) await svc.line(demoted, 5_000);
    expect(new Set(threadPolicies(apiPid))).toEqual(new Set([0]));

    const patient = (await call(d, "POST", "/v1/patients", {})).json.id as string;
    await post(d, patient, 0);
    await current(() => loginsApplied(d, patient), BATCH);
    await current(() => loginsQueried(d, patient), BATCH);

    // The api process answers for the worker too, each series under its process's role and pid.
    const m = await metrics(d.base);
    expect(processesIn(m)).toEqual([`api ${apiPid}`, `worker ${workerPid}`].sort());
    expect(total(m, "pss_logs_accepted_total", { source: "batch", role: "api" })).toBe(BATCH);
    expect(total(m, "pss_logs_applied_total", { role: "worker", pid: String(workerPid) })).toBeGreaterThanOrEqual(BATCH);
    expect(samplesOf(m, "pss_logs_applied_total", { role: "api" })).toEqual([]);
    expect(total(m, "pss_http_request_duration_seconds_count", { role: "api", route: "/v1/logs/batch", status_class: "2xx" })).toBe(1);
    expect(samplesOf(m, "pss_lag_messages", { consumer: `${d.ns}_state_p0` })).toHaveLength(1);
    expect(total(m, "pss_process_restarts_total", { child: "worker" })).toBe(0);
    expect(total(m, "pss_scrape_missing_processes")).toBe(0);
    const h = await health(d);
    expect(h?.json.processes.map((p: { role: string; pid: number }) => `${p.role} ${p.pid}`)).toEqual([`api ${apiPid}`, `worker ${workerPid}`]);
    // A worker too busy to answer (stopped here) is still listed, as it last said, with when it said it.
    const said = h!.json.processes[1];
    expect(said.partitions).toHaveLength(16);
    process.kill(workerPid, "SIGSTOP");
    try {
      await new Promise((r) => setTimeout(r, 300));
      const paused = await health(d);
      expect(paused?.json.processes[1]).toMatchObject({ role: "worker", pid: workerPid, partitions: said.partitions });
      expect(Date.parse(paused?.json.processes[1].reported_at)).toBeLessThan(Date.now() - 250);
      // Silent past 3 s, it is left out: the leases it named may be another member's by then.
      await new Promise((r) => setTimeout(r, 3_200));
      expect((await health(d))?.json.processes.map((p: { role: string }) => p.role)).toEqual(["api"]);
    } finally {
      process.kill(workerPid, "SIGCONT");
    }

    // Killed: what is accepted meanwhile waits in JetStream, and the supervisor starts another.
    // Meanwhile the api process says it still serves: /healthz 503 (a backend is down, as the
    // contract says) but degraded, not unavailable (the first answer at least: no worker can
    // be back before the supervisor's wait of 0.5 s).
    process.kill(workerPid, "SIGKILL");
    let restarting = true;
    const healthWhileRestarting: { status: number; state: string }[] = [];
    const polling = (async () => {
      while (restarting) {
        const h = await health(d);
        if (h) healthWhileRestarting.push({ status: h.status, state: h.json.status });
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await post(d, patient, BATCH);
    const restarted = await svc.line((l) => l.role === "supervisor" && l.child === "worker" && l.signal === "SIGKILL");
    expect(restarted).toMatchObject({ level: 40, restart_in_ms: expect.any(Number) });
    const secondWorker = await svc.line((l) => isWorkerReady(l) && l.pid !== workerPid, 60_000);
    restarting = false;
    await polling;
    expect(healthWhileRestarting.filter((h) => h.state === "unavailable")).toEqual([]);
    expect(healthWhileRestarting[0]).toEqual({ status: 503, state: "degraded" });
    expect(niceness(secondWorker.pid!)).toBe(Math.min(19, niceness(apiPid) + 10));
    await post(d, patient, 2 * BATCH);
    await current(() => loginsApplied(d, patient), 3 * BATCH);
    await current(() => loginsQueried(d, patient), 3 * BATCH);
    const after = await metrics(d.base);
    expect(processesIn(after)).toEqual([`api ${apiPid}`, `worker ${secondWorker.pid}`].sort());
    expect(total(after, "pss_process_restarts_total", { child: "worker" })).toBe(1);
    expect(total(after, "pss_logs_accepted_total", { source: "batch", role: "api" })).toBe(3 * BATCH);
    const logs = await call(d, "GET", `/v1/state/${patient}/logs?limit=500`);
    expect(logs.json.logs).toHaveLength(3 * BATCH);

    // Stopped: the api process first, then the worker; every line JSON and naming its process's role.
    svc.proc.kill("SIGTERM");
    expect(await svc.exited).toBe(0);
    const stops = svc.lines.filter((l) => l.msg === "shutting down").map((l) => l.role);
    expect(stops).toEqual(["api", "worker"]);
    expect(svc.other).toEqual([]);
    const pids: Record<string, number[]> = { supervisor: [svc.proc.pid!], api: [apiPid], worker: [workerPid, secondWorker.pid!] };
    for (const l of svc.lines) expect(pids[l.role!], JSON.stringify(l)).toContain(l.pid);
  }, 90_000);
});

describe("PSS_ROLE=api beside PSS_ROLE=worker", () => {
  it("accepts logs before any worker runs, answers an early log query 503 with Retry-After, and applies them once a worker starts", async () => {
    const d = deployment();
    const api = start(d.env("api"));
    // Serving without the query store: 503, as any backend down, but degraded.
    const down = await eventually(() => health(d), (h) => h !== null, 60_000);
    expect(down).toMatchObject({ status: 503, json: { status: "degraded", down: ["clickhouse"], clickhouse: { status: "down" }, instance: { role: "api", pid: api.proc.pid } } });
    const early = await call(d, "POST", "/v1/state/logs/query", { count: true });
    expect(early.status).toBe(503);
    expect(early.headers.get("retry-after")).toBe("1");
    expect(early.json.details[0].type).toBe("query_store_unavailable");

    const patient = (await call(d, "POST", "/v1/patients", {})).json.id as string;
    await post(d, patient, 0);
    // Alone, the worker serves /metrics and /healthz on PSS_METRICS_PORT, its only HTTP.
    const workerBase = `http://127.0.0.1:${d.port + 1}`;
    const worker = start({ ...d.env("worker"), PSS_METRICS_PORT: String(d.port + 1) });
    await worker.line(isWorkerReady, 60_000);
    // A dedicated worker keeps the priority it was started with.
    expect(niceness(worker.proc.pid!)).toBe(niceness(process.pid));
    await eventually(() => health(d), (h) => h?.json.status === "ok", 10_000);
    await post(d, patient, BATCH);
    await current(() => loginsApplied(d, patient), 2 * BATCH);
    await current(() => loginsQueried(d, patient), 2 * BATCH);
    expect(await health(d, workerBase)).toMatchObject({ status: 200, json: { status: "ok", instance: { role: "worker", pid: worker.proc.pid } } });
    const fromWorker = await metrics(workerBase);
    expect(processesIn(fromWorker)).toEqual([`worker ${worker.proc.pid}`]);
    expect(total(fromWorker, "pss_logs_applied_total")).toBeGreaterThanOrEqual(2 * BATCH);
    // Members apart answer for themselves; the lag is the namespace's, read by either.
    const fromApi = await metrics(d.base);
    expect(processesIn(fromApi)).toEqual([`api ${api.proc.pid}`]);
    expect(total(fromApi, "pss_logs_accepted_total", { source: "batch" })).toBe(2 * BATCH);
    for (const m of [fromApi, fromWorker]) expect(samplesOf(m, "pss_lag_messages", { consumer: `${d.ns}_state_p0` })).toHaveLength(1);

    api.proc.kill("SIGTERM");
    expect(await api.exited).toBe(0);
    worker.proc.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    expect(worker.lines.every((l) => l.role === "worker" && l.pid === worker.proc.pid)).toBe(true);
    expect(api.lines.every((l) => l.role === "api" && l.pid === api.proc.pid)).toBe(true);
  }, 90_000);
});
