/**
 * The apply rate of --workers worker processes (`PSS_ROLE=worker`, started as `npm start`
 * starts its worker) over a stored backlog: --logs logs for --patients patients are written
 * first through the service's write path, in this process and with no worker running, so
 * the whole backlog waits; then the workers start, split the partitions through their
 * leases, and the clock runs from the first worker's start until every partition's state
 * durable (`{ns}_state_p{N}_{epoch}`) has nothing pending or unacknowledged. Prints logs/s
 * applied, the workers' CPU (each runs the ClickHouse projector too when it holds that
 * lease), nats-server's and Redis's, and the projector's backlog at that moment.
 *
 * Workers run here at the default priority: alone, `PSS_ROLE=worker` does not lower it
 * (only under the supervisor of `npm start`, where it yields to the api processes).
 *
 *   npm run bench:apply [-- --workers 1 --logs 200000 --per-message 1 --patients 10000 --poll-ms 2000 --limit 600]
 *
 * --per-message 1 stores one log per JetStream message (each 100-log batch covers 100
 * patients, the device feed's shape); 10 stores ten (10 patients per batch).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.js";
import { createServices } from "../app/services.js";
import { destroyTopology } from "../infra/nats/topology.js";
import { deleteKeys } from "../infra/redis/connection.js";
import { newPatient } from "../src/control/patient-records.js";
import { Kvm } from "@nats-io/kv";
import { LOG_MIX } from "./log-mix.js";
import { logBacklog, waitStateDrained } from "./backlog.js";
import { arg, natsServerCpu, processCpu, redisServerCpu, rss } from "./support.js";

const workers = arg("workers", 1);
const total = arg("logs", 200_000);
const perMessage = arg("per-message", 1);
const patientCount = arg("patients", 10_000);
/** How often the partition durables are read (see waitStateDrained). */
const pollMs = arg("poll-ms", 2000);
/** Longest wait, in seconds: past it the run reports drained: false. */
const limitS = arg("limit", 600);
const batchSize = 100;
const patientsPerBatch = batchSize / perMessage;
if (!Number.isInteger(patientsPerBatch) || patientsPerBatch > patientCount) throw new Error("--per-message must divide 100, and --patients be at least 100 / --per-message");

const namespace = `apply${randomBytes(4).toString("hex")}`;
const adminKey = `bench-admin-${randomBytes(12).toString("hex")}`;
const writerDir = mkdtempSync(join(tmpdir(), "pss-apply-"));
const cfg = loadConfig({ ...process.env, PSS_NAMESPACE: namespace, DATA_DIR: writerDir, PSS_ADMIN_KEY: adminKey, LOG_LEVEL: "silent" });
const s = await createServices(cfg, "api");
const scope = { organization_id: "org_default", project_id: "prj_default" };
const procs: { proc: ChildProcess; dataDir: string; warnings: Map<string, number> }[] = [];
try {
  process.stdout.write(`creating ${patientCount} patients... `);
  const patients: string[] = [];
  for (let i = 0; i < patientCount; i += 100) {
    const chunk = Array.from({ length: Math.min(100, patientCount - i) }, () => newPatient({}, scope, new Date().toISOString()));
    await Promise.all(chunk.map((p) => s.patients.create(p)));
    patients.push(...chunk.map((p) => p.id));
  }
  console.log("done");

  // Batch b covers the next patientsPerBatch patients in turn, so a patient's logs are a
  // whole round of batches apart (never in two batches written at once) and its
  // timestamps rise in stream order: no late log makes the engine replay a patient.
  process.stdout.write(`writing ${total} logs, ${perMessage} per message... `);
  const base = Date.UTC(2026, 4, 1);
  const batches = Math.ceil(total / batchSize);
  let nextBatch = 0;
  let written = 0;
  const w0 = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let b = nextBatch++; b < batches; b = nextBatch++) {
        const logs = Array.from({ length: batchSize }, (_, i) => {
          const n = b * batchSize + i;
          const m = LOG_MIX[n % LOG_MIX.length]!;
          const patient = patients[(b * patientsPerBatch + (i % patientsPerBatch)) % patients.length]!;
          return { log_type: m.log_type, patient_id: patient, timestamp: new Date(base + n * 1000).toISOString(), payload: m.payload(n) };
        });
        await s.logWriter.writeBatch(scope, logs, { source: "batch", atomic: false, at: ["b"] });
        written += logs.length;
      }
    }),
  );
  const writeSeconds = (performance.now() - w0) / 1000;
  const stored = await s.topology.jsm.streams.info(s.topology.names.logsStream);
  console.log(`done: ${written} logs in ${stored.state.messages} messages, ${Math.round(written / writeSeconds)} logs/s written`);

  const nats0 = natsServerCpu();
  const redis0 = redisServerCpu();
  const t0 = performance.now();
  for (let i = 0; i < workers; i++) {
    const dataDir = mkdtempSync(join(tmpdir(), "pss-apply-worker-"));
    // What `npm start` runs (package.json), in the worker's role.
    const proc = spawn(process.execPath, ["--max-semi-space-size=32", ...(process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter(Boolean), "dist/app/main.js"], {
      env: { ...process.env, PSS_ROLE: "worker", PSS_NAMESPACE: namespace, PSS_ADMIN_KEY: adminKey, DATA_DIR: dataDir, LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const warnings = new Map<string, number>();
    proc.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      // WORKER_LOG=prefix keeps each worker's log lines (prefix.0, prefix.1) for a closer look.
      if (process.env.WORKER_LOG) appendFileSync(`${process.env.WORKER_LOG}.${i}`, chunk);
      for (const msg of chunk.matchAll(/"msg":"([^"]*)"/g)) warnings.set(msg[1]!, (warnings.get(msg[1]!) ?? 0) + 1);
    });
    procs.push({ proc, dataDir, warnings });
  }
  const drained = await waitStateDrained(s.topology.jsm, namespace, s.topology.names, t0, { pollMs, limitS });
  const cpu = procs.map((p) => +processCpu(p.proc.pid!).toFixed(1));
  const natsCpu = natsServerCpu() - nats0;
  const redisCpu = redisServerCpu() - redis0;
  const projector = (await logBacklog(s.topology.jsm, namespace, s.topology.names)).others;
  // Which worker holds what when the state is drained (a member's id holds its pid).
  const leases = await new Kvm(s.nc).open(s.topology.names.leasesBucket);
  const held = new Map<number, string[]>(procs.map((p) => [p.proc.pid!, []]));
  for await (const key of await leases.keys("lease.>")) {
    const entry = await leases.get(key);
    const member = entry?.string() ? (JSON.parse(entry.string()) as { member: string }).member : "";
    held.get(Number(/-(\d+)-[0-9a-f]+$/.exec(member)?.[1]))?.push(key.slice("lease.".length));
  }
  const sec = drained.seconds;
  console.log(
    JSON.stringify(
      {
        what: `${workers} PSS_ROLE=worker process(es), as npm start runs its worker, applying a stored backlog`,
        workers,
        logs: written,
        logs_per_message: perMessage,
        messages: stored.state.messages,
        patients: patientCount,
        drained: drained.drained,
        seconds_from_first_worker_start: sec,
        drain_read_every_ms: pollMs,
        consumer_list_ms: drained.listMs,
        logs_applied_per_second: Math.round(written / sec),
        every_partition_held_after_seconds: drained.allHeldAt,
        logs_applied_per_second_counted_from_all_held: drained.allHeldAt === null ? null : Math.round(written / (sec - drained.allHeldAt)),
        worker_cpu_seconds: cpu,
        worker_cpu_us_per_log: Math.round((cpu.reduce((a, b) => a + b, 0) * 1e6) / written),
        cpu_cores: { workers: +(cpu.reduce((a, b) => a + b, 0) / sec).toFixed(2), nats_server: +(natsCpu / sec).toFixed(2), redis_server: +(redisCpu / sec).toFixed(2) },
        leases_held: procs.map((p) => held.get(p.proc.pid!)!.join(" ")),
        worker_peak_rss_mb: procs.map((p) => rss(p.proc.pid!).peak),
        state_messages_left_and_partitions_held_each_second: drained.samples.map((x) => `${x[1]}/${x[2]}`),
        projector_messages_left_when_state_drained: projector,
        worker_warnings: procs.map((p) => Object.fromEntries(p.warnings)),
      },
      null,
      2,
    ),
  );
} finally {
  await Promise.all(
    procs.map(async ({ proc }) => {
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    }),
  );
  for (const p of procs) rmSync(p.dataDir, { recursive: true, force: true });
  await destroyTopology(s.nc, namespace);
  await deleteKeys(s.redis, `${namespace}:*`);
  await s.close();
  rmSync(writerDir, { recursive: true, force: true });
}
