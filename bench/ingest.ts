/**
 * Sustained POST /v1/logs/batch throughput of the whole service as `npm start` runs it
 * (the supervisor, its worker and --workers api processes): 32 concurrent clients send
 * 100-log mixed batches for 20 s, every log with its own idempotency key, each batch over
 * --patients-per-batch distinct patients. The state engine applies behind the load: the
 * backlog it has left when the load ends is read from the partition durables, and the time
 * until they are drained is measured (--drain 0 skips it). Then counts what JetStream
 * stored, so "accepted" means durable.
 *
 * Issue 27's shape (one log per patient per batch, so one log per stored message):
 *   npm run bench:ingest -- --patients-per-batch 100
 *
 *   npm run bench:ingest [-- --seconds 20 --clients 32 --patients 10000 --patients-per-batch 10 --workers 1 --rate 0 --warmup 3 --drain 1 --poll-ms 1000 --drain-limit 300]
 */
import { randomBytes } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { validatePayload, resolveLogType } from "../catalog/index.js";
import { destroyTopology, topologyNames } from "../infra/nats/topology.js";
import { LOG_MIX } from "./log-mix.js";
import { arg, call, natsServerCpu, percentile, redisServerCpu, startService } from "./support.js";
import { logBacklog, waitStateDrained } from "./backlog.js";

const seconds = arg("seconds", 20);
const clients = arg("clients", 32);
const patientsTotal = arg("patients", 10_000);
const perBatch = arg("patients-per-batch", 10);
/** Offered load in logs/s (open loop: each client sends on a schedule); 0 = as fast as answers come. */
const rate = arg("rate", 0);
/** Seconds of load before measuring: JIT warm-up and first-touch of caches and shards. */
const warmup = arg("warmup", 3);
const drain = arg("drain", 1) !== 0;
/** How often the partition durables are read while they drain (see waitStateDrained). */
const pollMs = arg("poll-ms", 1000);
/** Longest wait for the drain, in seconds: past it the run reports drained: false. */
const drainLimit = arg("drain-limit", 300);
const batchSize = 100;

for (const m of LOG_MIX) {
  const issues = validatePayload(resolveLogType(m.log_type)!, m.payload(1));
  if (issues.length) throw new Error(`bench payload ${m.log_type} is invalid: ${JSON.stringify(issues)}`);
}

const workers = arg("workers", 1);
const svc = await startService({ PSS_WORKERS: String(workers) }, clients);
try {
  process.stdout.write(`creating ${patientsTotal} patients... `);
  const patients: string[] = [];
  for (let i = 0; i < patientsTotal; i += 1000) {
    const r = await call(svc.pool, svc.adminKey, "POST", "/v1/patients/batch", { patients: Array.from({ length: Math.min(1000, patientsTotal - i) }, (_, j) => ({ first_name: `P${i + j}` })) });
    patients.push(...r.json.items.map((x: { id: string }) => x.id));
  }
  console.log("done");

  const run = randomBytes(4).toString("hex");
  let seq = 0;
  // Distinct patients per batch (a random start and stride over the list), so
  // --patients-per-batch 100 gives one log per patient and so one log per stored message.
  const strides = [1, 7, 13, 31, 101, 211].filter((d) => patients.length % d !== 0 || d === 1);
  function group(): string[] {
    const start = Math.floor(Math.random() * patients.length);
    const stride = strides[Math.floor(Math.random() * strides.length)]!;
    return Array.from({ length: perBatch }, (_, j) => patients[(start + j * stride) % patients.length]!);
  }
  function body(): string {
    const who = group();
    const logs = [];
    for (let i = 0; i < batchSize; i++) {
      const n = seq++;
      const m = LOG_MIX[n % LOG_MIX.length]!;
      logs.push({
        log_type: m.log_type,
        patient_id: who[i % who.length],
        // Event time rises with the send order, as a live feed's does: a time that wrapped
        // round would make nearly every later log late for its patient (a replay each).
        timestamp: new Date(Date.UTC(2026, 4, 1) + n * 1000).toISOString(),
        payload: m.payload(n),
        idempotency_key: `${run}-${n}`,
      });
    }
    return JSON.stringify({ logs });
  }

  if (warmup > 0) {
    process.stdout.write(`warming up for ${warmup} s... `);
    const until = performance.now() + warmup * 1000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) await call(svc.pool, svc.adminKey, "POST", "/v1/logs/batch", body());
      }),
    );
    console.log("done");
  }
  const warmupLogs = seq;
  // Bodies for the timed phase are built before the clock starts (then on the fly), as in
  // bench/state.ts: the load generator shares the service's two cores.
  const prebuilt = Array.from({ length: Math.ceil((seconds * (rate || 40_000)) / batchSize) }, body);
  let next = 0;
  const nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
  const jsm = await jetstreamManager(nc);
  const names = topologyNames(svc.namespace);
  const roles0 = svc.cpuByRole();
  const redis0 = redisServerCpu();
  const latencies: number[] = [];
  let accepted = 0;
  let failedBatches = 0;
  const cpu0 = svc.cpuSeconds();
  const nats0 = natsServerCpu();
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  // Open loop: client c sends its k-th batch at t0 + (k * clients + c) * gap, whether or
  // not earlier answers came back, so latency is measured at the offered rate.
  const gapMs = rate > 0 ? (batchSize * 1000) / rate : 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let k = 0; performance.now() < end; k++) {
        if (gapMs > 0) {
          const due = t0 + (k * clients + c) * gapMs;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (due >= end) break;
        }
        const b = prebuilt[next++] ?? body();
        const s = performance.now();
        const r = await call(svc.pool, svc.adminKey, "POST", "/v1/logs/batch", b);
        latencies.push(performance.now() - s);
        if (r.status === 200) accepted += r.json.accepted;
        else failedBatches++;
      }
    }),
  );
  const tEnd = performance.now();
  const elapsed = (tEnd - t0) / 1000;
  const cpu = svc.cpuSeconds() - cpu0;
  const roles1 = svc.cpuByRole();
  const natsCpu = natsServerCpu() - nats0;
  const redis1 = redisServerCpu();
  const selfCpu = process.cpuUsage(self0);
  latencies.sort((a, b) => a - b);
  prebuilt.length = 0;

  // What the engine has yet to apply when the load ends, then how long it takes to drain.
  const messages = (await jsm.streams.info(names.logsStream)).state.messages;
  const logsPerMessage = (accepted + warmupLogs) / messages;
  const atEnd = await logBacklog(jsm, svc.namespace, names);
  const drained = drain ? await waitStateDrained(jsm, svc.namespace, names, tEnd, { pollMs, limitS: drainLimit }) : null;
  const roles2 = svc.cpuByRole();
  const perRole = (a: Record<string, number>, b: Record<string, number>, s: number) => Object.fromEntries(Object.keys(b).map((k) => [k, +((b[k]! - (a[k] ?? 0)) / s).toFixed(2)]));

  // Durability check: read the whole log stream back and count distinct stored logs.
  const ids = new Set<string>();
  const keys = new Set<string>();
  const consumer = await jetstream(nc).consumers.get(names.logsStream);
  const iter = await consumer.consume({ max_messages: 1000 });
  let read = 0;
  for await (const m of iter) {
    for (const l of m.json<{ logs: { id: string; idempotency_key?: string }[] }>().logs) {
      ids.add(l.id);
      if (l.idempotency_key) keys.add(l.idempotency_key);
    }
    if (++read >= messages) break;
  }
  iter.stop();

  console.log(
    JSON.stringify(
      {
        seconds: Number(elapsed.toFixed(1)),
        clients,
        mode: rate > 0 ? `open loop at ${rate} logs/s offered` : "closed loop",
        service_workers: workers,
        batch_size: batchSize,
        patients_per_batch: perBatch,
        batches: latencies.length,
        failed_batches: failedBatches,
        logs_accepted: accepted,
        logs_per_second: Math.round(accepted / elapsed),
        latency_ms: { p50: +percentile(latencies, 50).toFixed(1), p90: +percentile(latencies, 90).toFixed(1), p99: +percentile(latencies, 99).toFixed(1), max: +latencies.at(-1)!.toFixed(1) },
        cpu_cores: {
          service: +(cpu / elapsed).toFixed(2),
          service_by_process: perRole(roles0, roles1, elapsed),
          nats_server: +(natsCpu / elapsed).toFixed(2),
          redis_server: +((redis1 - redis0) / elapsed).toFixed(2),
          load_generator: +((selfCpu.user + selfCpu.system) / 1e6 / elapsed).toFixed(2),
        },
        backlog_at_end_of_load: {
          state_messages: atEnd.state,
          state_logs: Math.round(atEnd.state * logsPerMessage),
          logs_per_message: +logsPerMessage.toFixed(2),
          others_messages: atEnd.others,
        },
        drain: drained && {
          drained: drained.drained,
          seconds_after_load: drained.seconds,
          read_every_ms: pollMs,
          consumer_list_ms: drained.listMs,
          logs_applied_per_second_while_draining: drained.drained && drained.seconds > 0 ? Math.round((atEnd.state * logsPerMessage) / drained.seconds) : null,
          service_cpu_cores_while_draining: drained.seconds > 0 ? perRole(roles1, roles2, drained.seconds) : null,
          state_messages_left_each_second: drained.samples.map((x) => x[1]),
          others_messages_left: drained.last.others,
        },
        warmup_logs: warmupLogs,
        jetstream: { log_messages: messages, logs_stored: ids.size, distinct_idempotency_keys: keys.size, stored_equals_accepted: ids.size === accepted + warmupLogs && keys.size === accepted + warmupLogs },
      },
      null,
      2,
    ),
  );
  await destroyTopology(nc, svc.namespace);
  await nc.close();
} finally {
  await svc.stop();
}
