/**
 * MCP tool-call latency under concurrent sessions: seeds 1,000 patients with 20 mixed
 * logs each, waits until the state engine has applied them and the views are rendered,
 * then 50 MCP clients (the SDK's own Client over streamable HTTP, each its own session
 * as a model host would hold it) call get_stable_data and get_view in turn on random
 * patients for 10 s after a 3 s warm-up. Latency is measured at the client: the whole
 * JSON-RPC round trip, including the client's own response validation.
 *
 * Closed loop (default): each session calls again as soon as it is answered, which
 * measures saturation (latency is then sessions / throughput). Open loop (--rate N):
 * the sessions together offer N calls/s on a fixed schedule, as agents do that think
 * between calls, so latency is measured at that load.
 *
 * --rest runs the same load against the REST twins (GET .../stable, GET .../views/{type})
 * with one keep-alive connection per session, as a baseline for the MCP overhead. --raw
 * sends the same MCP tools/call messages as plain JSON-RPC over one keep-alive connection
 * per session (after each session's SDK handshake): the SDK client costs about as much CPU
 * as the server per call, and on two shared cores it otherwise competes with the server.
 *
 *   npm run bench:mcp [-- --patients 1000 --sessions 50 --seconds 10 --warmup 3 --rate 0 --rest --raw]
 */
import { Pool } from "undici";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { destroyTopology, topologyNames } from "../infra/nats/topology.js";
import { logBacklog, stateDrained } from "./backlog.js";
import { LOG_MIX } from "./log-mix.js";
import { arg, call, percentile, startService } from "./support.js";

const patientsTotal = arg("patients", 1_000);
const sessions = arg("sessions", 50);
const seconds = arg("seconds", 10);
const warmup = arg("warmup", 3);
/** Calls/s offered by all sessions together (open loop); 0 = each session calls as soon as answered. */
const rate = arg("rate", 0);
const rest = process.argv.includes("--rest");
/** MCP JSON-RPC over plain keep-alive HTTP (after each session's SDK handshake): the server's latency without the SDK client's CPU on the same cores. */
const raw = process.argv.includes("--raw");
const logsPerPatient = 20;
const TOOLS = ["get_stable_data", "get_view"] as const;
const VIEWS = ["symptom_snapshot", "medication_snapshot", "labs_snapshot", "vitals_snapshot", "device_snapshot"] as const;

const svc = await startService({}, 16);
const nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
const jsm = await jetstreamManager(nc);
const names = topologyNames(svc.namespace);
const clients: Client[] = [];
try {
  process.stdout.write(`seeding ${patientsTotal} patients with ${logsPerPatient} logs each... `);
  const patients: string[] = [];
  for (let i = 0; i < patientsTotal; i += 1000) {
    const r = await call(svc.pool, svc.adminKey, "POST", "/v1/patients/batch", { patients: Array.from({ length: Math.min(1000, patientsTotal - i) }, () => ({})) });
    patients.push(...r.json.items.map((x: { id: string }) => x.id));
  }
  const base = Date.UTC(2026, 4, 1);
  let n = 0;
  // 5 patients per 100-log batch; time moves forward per patient.
  for (let p = 0; p < patients.length; p += 5) {
    const logs = [];
    for (let i = 0; i < 100; i++) {
      const m = LOG_MIX[n % LOG_MIX.length]!;
      logs.push({ log_type: m.log_type, patient_id: patients[p + (i % 5)] ?? patients[0], timestamp: new Date(base + i * 60_000).toISOString(), payload: m.payload(n++) });
    }
    const r = await call(svc.pool, svc.adminKey, "POST", "/v1/logs/batch", { logs });
    if (r.status !== 200 || r.json.failed > 0) throw new Error(`seeding failed: ${JSON.stringify(r.json).slice(0, 500)}`);
  }
  // Every partition's state durable has applied what was sent (the layout of bench/backlog.ts).
  while (!stateDrained(await logBacklog(jsm, svc.namespace, names))) await new Promise((r) => setTimeout(r, 200));
  // Views render after a pause in each patient's logs: wait until the service is quiet.
  for (let quiet = 0, last = svc.cpuSeconds(); quiet < 2; ) {
    await new Promise((r) => setTimeout(r, 500));
    const now = svc.cpuSeconds();
    quiet = now - last < 0.05 ? quiet + 1 : 0;
    last = now;
  }
  console.log("done");

  const restPool = new Pool(svc.url, { connections: sessions, keepAliveTimeout: 60_000 });
  let rpcId = 0;
  /** One tool call, over MCP or (with --rest) its REST twin. */
  const invoke = async (c: Client, tool: (typeof TOOLS)[number], args: { patient_id: string; view_type?: string }): Promise<boolean> => {
    if (raw) {
      const r = await restPool.request({
        method: "POST",
        path: "/mcp",
        headers: {
          authorization: `Bearer ${svc.adminKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": LATEST_PROTOCOL_VERSION,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++rpcId, method: "tools/call", params: { name: tool, arguments: args } }),
      });
      const answer = (await r.body.json()) as { result?: { isError?: boolean } };
      return r.statusCode === 200 && answer.result !== undefined && !answer.result.isError;
    }
    if (!rest) return !(await c.callTool({ name: tool, arguments: args })).isError;
    const path = tool === "get_view" ? `/v1/state/${args.patient_id}/views/${args.view_type}` : `/v1/state/${args.patient_id}/stable`;
    const r = await restPool.request({ method: "GET", path, headers: { authorization: `Bearer ${svc.adminKey}` } });
    await r.body.text();
    return r.statusCode === 200;
  };
  for (let i = 0; i < sessions; i++) {
    const c = new Client({ name: `bench-${i}`, version: "1.0.0" });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${svc.adminKey}` } },
      // The transport hands one shared AbortSignal to every fetch, and Node's fetch keeps a
      // listener on it per request until GC: thousands per session here. A bench never
      // cancels, so each call goes without it.
      fetch: (url, init) => fetch(url, { ...init, signal: undefined }),
    }));
    clients.push(c);
  }
  // Background work left in the service (state engine, projections): shown beside the results.
  const idle0 = svc.cpuSeconds();
  await new Promise((r) => setTimeout(r, 2_000));
  const idleCores = (svc.cpuSeconds() - idle0) / 2;
  const lat: Record<(typeof TOOLS)[number], number[]> = { get_stable_data: [], get_view: [] };
  let errors = 0;
  const run = async (ms: number, record: boolean) => {
    const t0 = performance.now();
    const end = t0 + ms;
    const gapMs = rate > 0 ? 1000 / rate : 0;
    await Promise.all(clients.map(async (c, i) => {
      for (let k = 0; performance.now() < end; k++) {
        if (gapMs > 0) {
          // Session i makes its k-th call at t0 + (k * sessions + i) * gap, whether or not it is behind.
          const due = t0 + (k * sessions + i) * gapMs;
          if (due >= end) break;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        const tool = TOOLS[k % 2]!;
        const patient_id = patients[(i * 7919 + k * 104_729) % patients.length]!;
        const args = tool === "get_view" ? { patient_id, view_type: VIEWS[k % VIEWS.length]! } : { patient_id };
        const s = performance.now();
        const ok = await invoke(c, tool, args);
        const ms = performance.now() - s;
        if (!ok) errors++;
        else if (record) lat[tool].push(ms);
      }
    }));
  };
  if (warmup > 0) {
    process.stdout.write(`warming up for ${warmup} s... `);
    await run(warmup * 1000, false);
    console.log("done");
  }
  const cpu0 = svc.cpuSeconds();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  await run(seconds * 1000, true);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = svc.cpuSeconds() - cpu0;
  const self = process.cpuUsage(self0);
  const stats = (xs: number[]) => {
    xs.sort((a, b) => a - b);
    return { calls: xs.length, p50_ms: +percentile(xs, 50).toFixed(2), p90_ms: +percentile(xs, 90).toFixed(2), p99_ms: +percentile(xs, 99).toFixed(2) };
  };
  const total = lat.get_stable_data.length + lat.get_view.length;
  console.log(JSON.stringify({
    patients: patientsTotal,
    sessions,
    seconds,
    protocol: rest ? "REST twins (baseline)" : raw ? "MCP, JSON-RPC over plain HTTP" : "MCP",
    mode: rate > 0 ? `open loop at ${rate} calls/s offered` : "closed loop",
    calls_per_second: Math.round(total / elapsed),
    tool_errors: errors,
    service_cpu_cores: +(cpu / elapsed).toFixed(2),
    service_cpu_cores_idle_before: +idleCores.toFixed(2),
    service_cpu_us_per_call: Math.round((cpu * 1e6) / total),
    client_cpu_cores: +((self.user + self.system) / 1e6 / elapsed).toFixed(2),
    get_stable_data: stats(lat.get_stable_data),
    get_view: stats(lat.get_view),
  }, null, 2));
  await restPool.close();
} finally {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  // The service first, so its consumers do not see their streams go.
  await svc.stop();
  await destroyTopology(nc, svc.namespace);
  await nc.close();
}
