/**
 * End to end, from batch accepted to state applied: 32 clients send 100-log mixed
 * batches for 10,000 patients (each client owns a 32nd of them, so each patient's logs
 * arrive in time order, as a gateway sends them). The state engine's backlog is sampled
 * every second; the run ends when it is drained. Then 200 concurrent readers read state
 * (stable modules, an event module, a view) at one read per 100 ms each: 2 s of warm-up
 * (reported apart), then 10 s timed; then 10 s closed loop.
 *
 *   npm run bench:state [-- --seconds 20 --patients 10000 --rate 0 --readers 200 --read-seconds 10 --read-warmup-seconds 2 --reader-interval-ms 100]
 */
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { Pool } from "undici";
import { destroyTopology, topologyNames } from "../infra/nats/topology.js";
import { LOG_MIX } from "./log-mix.js";
import { arg, call, natsServerCpu, percentile, rss, startService } from "./support.js";
import { speedProbeMs } from "./speed-probe.js";
import { logBacklog, stateDrained } from "./backlog.js";

const seconds = arg("seconds", 20);
const clients = arg("clients", 32);
const patientsTotal = arg("patients", 10_000);
const rate = arg("rate", 0);
const readers = arg("readers", 200);
const readSeconds = arg("read-seconds", 10);
/** Paced reads before the timed ones: the read path's first thousands of calls run before V8 has optimized it. */
const warmupSeconds = arg("read-warmup-seconds", 2);
const readerIntervalMs = arg("reader-interval-ms", 100);
const batchSize = 100;
const perBatch = 10;

const svc = await startService({ PSS_ACTOR_IDLE_MS: process.env.PSS_ACTOR_IDLE_MS ?? "30000", ...(process.env.PSS_VIEW_DEBOUNCE_MS ? { PSS_VIEW_DEBOUNCE_MS: process.env.PSS_VIEW_DEBOUNCE_MS } : {}) }, clients);
const nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
const jsm = await jetstreamManager(nc);
const names = topologyNames(svc.namespace);
try {
  const patients: string[] = [];
  for (let i = 0; i < patientsTotal; i += 1000) {
    const r = await call(svc.pool, svc.adminKey, "POST", "/v1/patients/batch", { patients: Array.from({ length: Math.min(1000, patientsTotal - i) }, () => ({})) });
    patients.push(...r.json.items.map((x: { id: string }) => x.id));
  }
  const owned = Array.from({ length: clients }, (_, c) => patients.filter((_, i) => i % clients === c));
  const base = Date.UTC(2026, 4, 1);
  let n = 0;
  const body = (c: number, k: number): string => {
    const mine = owned[c]!;
    const logs = [];
    for (let i = 0; i < batchSize; i++) {
      const m = LOG_MIX[n % LOG_MIX.length]!;
      const pid = mine[(k * perBatch + (i % perBatch)) % mine.length]!;
      // Time moves forward per client, so per patient: no late logs in this run.
      logs.push({ log_type: m.log_type, patient_id: pid, timestamp: new Date(base + (k * batchSize + i) * 1000).toISOString(), payload: m.payload(n++) });
    }
    return JSON.stringify({ logs });
  };
  // Bodies are built before the clock starts, enough for 40,000 logs/s (then on the fly):
  // the load generator shares the service's two cores, and building and serializing a
  // hundred logs per request cost it about a fifth of a core at 9,000 logs/s.
  const ready = Math.ceil((seconds * 40_000) / clients / batchSize);
  const prebuilt = Array.from({ length: clients }, (_, c) => Array.from({ length: ready }, (_, k) => body(c, k)));
  const bodyFor = (c: number, k: number): string => prebuilt[c]![k] ?? body(c, k);

  // Every partition's durable counts; one not yet made (its lease not yet taken) is not drained.
  const backlog = async () => {
    const b = await logBacklog(jsm, svc.namespace, names);
    return stateDrained(b) ? 0 : Math.max(1, b.state);
  };
  const samples: { t: number; backlog: number }[] = [];
  let accepted = 0;
  const probeBefore = speedProbeMs();
  const cpu0 = svc.cpuSeconds();
  const nats0 = natsServerCpu();
  const gen0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const sampler = setInterval(() => void backlog().then((b) => samples.push({ t: Math.round((performance.now() - t0) / 1000), backlog: b })), 1000);
  const gapMs = rate > 0 ? (batchSize * 1000) / rate : 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let k = 0; performance.now() < end; k++) {
        if (gapMs > 0) {
          const due = t0 + (k * clients + c) * gapMs;
          if (due >= end) break;
          if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
        }
        const r = await call(svc.pool, svc.adminKey, "POST", "/v1/logs/batch", bodyFor(c, k));
        if (r.status === 200) accepted += r.json.accepted;
      }
    }),
  );
  const sent = (performance.now() - t0) / 1000;
  while ((await backlog()) > 0) await new Promise((r) => setTimeout(r, 100));
  const drained = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  const serviceCpu = svc.cpuSeconds() - cpu0;
  const natsCpu = natsServerCpu() - nats0;
  const gen = process.cpuUsage(gen0);

  // Views are regenerated after a pause in each patient's logs: let that finish (the
  // service goes quiet) so the read figures measure reads.
  for (let quiet = 0, last = svc.cpuSeconds(); quiet < 2; ) {
    await new Promise((r) => setTimeout(r, 500));
    const now = svc.cpuSeconds();
    quiet = now - last < 0.05 ? quiet + 1 : 0;
    last = now;
  }
  // Reads: 200 concurrent readers over their own connections, first each at its own pace
  // (one read every --reader-interval-ms, as clinicians' tools and agents read), then
  // closed loop (each reads again as soon as it has its answer) for the throughput.
  const readPool = new Pool(svc.url, { connections: readers });
  const paths = (pid: string) => [`/v1/state/${pid}/stable`, `/v1/state/${pid}/event-modules/symptoms`, `/v1/state/${pid}/views/device_snapshot`];
  const readPhase = async (intervalMs: number, seconds = readSeconds) => {
    const lat: number[] = [];
    const r0 = performance.now();
    await Promise.all(
      Array.from({ length: readers }, async (_, i) => {
        // Readers start spread over one interval, so they do not all read at once.
        const offset = (i * intervalMs) / readers;
        for (let k = 0; performance.now() - r0 < seconds * 1000; k++) {
          if (intervalMs > 0) {
            const due = r0 + offset + k * intervalMs;
            if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
          }
          const pid = patients[(i * 7919 + k * 104_729) % patients.length]!;
          const path = paths(pid)[k % 3]!;
          const s = performance.now();
          const res = await readPool.request({ method: "GET", path, headers: { authorization: `Bearer ${svc.adminKey}` } });
          await res.body.text();
          if (res.statusCode === 200) lat.push(performance.now() - s);
        }
      }),
    );
    const elapsed = (performance.now() - r0) / 1000;
    lat.sort((a, b) => a - b);
    return { readers, requests: lat.length, per_second: Math.round(lat.length / elapsed), p50_ms: +percentile(lat, 50).toFixed(2), p99_ms: +percentile(lat, 99).toFixed(2) };
  };
  // Every connection opened (and the routes warmed) before anything is timed.
  await Promise.all(Array.from({ length: readers }, async (_, i) => (await readPool.request({ method: "GET", path: paths(patients[i % patients.length]!)[i % 3]!, headers: { authorization: `Bearer ${svc.adminKey}` } })).body.text()));
  const warmup = warmupSeconds > 0 ? await readPhase(readerIntervalMs, warmupSeconds) : null;
  const paced = await readPhase(readerIntervalMs);
  const closed = await readPhase(0);
  await readPool.close();
  console.log(
    JSON.stringify(
      {
        patients: patientsTotal,
        clients,
        mode: rate > 0 ? `open loop at ${rate} logs/s offered` : "closed loop",
        logs_accepted: accepted,
        accept_seconds: +sent.toFixed(1),
        applied_by_seconds: +drained.toFixed(1),
        logs_applied_per_second_end_to_end: Math.round(accepted / drained),
        backlog_messages_per_second: samples.map((s) => s.backlog),
        cpu_cores_while_writing: { service: +(serviceCpu / drained).toFixed(2), nats_server: +(natsCpu / drained).toFixed(2), load_generator: +((gen.user + gen.system) / 1e6 / drained).toFixed(2) },
        service_cpu_us_per_log: Math.round((serviceCpu * 1e6) / accepted),
        reads_warmup: warmup && { seconds: warmupSeconds, ...warmup },
        reads_paced: { every_ms_per_reader: readerIntervalMs, ...paced },
        reads_closed_loop: closed,
        service_peak_rss_mb: rss(svc.proc.pid!).peak,
        speed_probe_ms: { before: probeBefore, after: speedProbeMs() },
      },
      null,
      2,
    ),
  );
} finally {
  // The service first, so its consumers do not see their streams go.
  await svc.stop();
  await destroyTopology(nc, svc.namespace);
  await nc.close();
}
