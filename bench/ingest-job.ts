/**
 * A historical ingestion job end to end: generates a JSONL file (patients first, then
 * logs interleaved across patients in time order, 12 log types, every log with its own
 * idempotency key), uploads it through the one-time URL, starts a job without
 * confirmation and follows it to completed. Prints the time per stage, logs/s overall
 * (upload start to completed) and the service process's peak RSS.
 *
 *   npm run bench:ingest-job [-- --logs 1000000 --patients 10000 --keys 1 --stage-only 0]
 *
 * `--stage-only 1` stops at AWAITING_CONFIRMATION (upload, validation, patients,
 * staging: the memory of big files) and cancels the job with rollback.
 */
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { destroyTopology } from "../infra/nats/topology.js";
import { LOG_MIX } from "./log-mix.js";
import { arg, call, natsServerCpu, rss, startService } from "./support.js";
import { speedProbeMs } from "./speed-probe.js";

const logs = arg("logs", 1_000_000);
const patients = arg("patients", 10_000);
/** Share of logs carrying an idempotency key (0..1). */
const keyShare = arg("keys", 1);
const stageOnly = arg("stage-only", 0) === 1;

async function generate(path: string): Promise<number> {
  const out = createWriteStream(path, { highWaterMark: 1024 * 1024 });
  const write = async (s: string) => {
    if (!out.write(s)) await once(out, "drain");
  };
  for (let p = 0; p < patients; p++) {
    await write(`${JSON.stringify({ type: "patient", data: { first_name: `P${p}`, timezone: "Europe/Paris", external_identifiers: [{ system: "bench-mrn", value: `M${p}` }] } })}\n`);
  }
  // A year of history, oldest first, every patient's logs spread through it.
  const start = Date.UTC(2025, 0, 1);
  const step = (365 * 86_400_000) / logs;
  for (let i = 0; i < logs; i++) {
    const m = LOG_MIX[i % LOG_MIX.length]!;
    const data: Record<string, unknown> = { event_type: m.log_type, patient_id: `M${(i * 7919) % patients}`, timestamp: new Date(start + Math.floor(i * step)).toISOString(), payload: m.payload(i) };
    if (i < logs * keyShare) data.idempotency_key = `bench-${i}`;
    await write(`${JSON.stringify({ type: "log", data })}\n`);
  }
  out.end();
  await once(out, "finish");
  return statSync(path).size;
}

const dir = mkdtempSync(join(tmpdir(), "pss-bench-job-"));
const file = join(dir, "history.jsonl");
process.stdout.write(`generating ${logs} logs over ${patients} patients... `);
const bytes = await generate(file);
console.log(`${(bytes / 1e6).toFixed(0)} MB`);

const probeBefore = speedProbeMs();
const svc = await startService({}, 4);
try {
  const pid = svc.proc.pid!;
  const cpu0 = svc.cpuSeconds();
  const nats0 = natsServerCpu();
  const t0 = performance.now();
  const u = await call(svc.pool, svc.adminKey, "POST", "/v1/ingestion/upload-url", {});
  const put = await svc.pool.request({ method: "PUT", path: new URL(u.json.upload_url).pathname, body: createReadStream(file, { highWaterMark: 256 * 1024 }), headers: { "content-type": "application/x-ndjson" } });
  const uploaded = JSON.parse(await put.body.text());
  if (put.statusCode !== 200) throw new Error(`upload failed: ${JSON.stringify(uploaded)}`);
  const tUpload = performance.now();
  console.log(`uploaded in ${((tUpload - t0) / 1000).toFixed(1)} s (RSS ${rss(pid).now} MB)`);
  const created = await call(svc.pool, svc.adminKey, "POST", "/v1/ingestion/jobs", { s3_key: u.json.s3_key, require_confirmation: stageOnly, rollback_on_cancel: true });
  if (created.status !== 201) throw new Error(`job not created: ${JSON.stringify(created.json)}`);
  const stages: Record<string, number> = {};
  let stage = "";
  let job = created.json;
  let tDone = 0;
  /** Highest anonymous RSS seen by the 0.5 s polls (a sample, not the kernel's peak). */
  let peakAnon = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    job = (await call(svc.pool, svc.adminKey, "GET", `/v1/ingestion/jobs/${created.json.job_id}`)).json;
    const now = performance.now();
    const m = rss(pid);
    peakAnon = Math.max(peakAnon, m.anon);
    if (job.stage !== stage) {
      stage = job.stage;
      stages[stage] = now;
      process.stdout.write(`\n${((now - t0) / 1000).toFixed(1)} s: ${stage} (RSS ${m.now} MB; peak so far by process ${JSON.stringify(m.peakByProcess)})\n`);
    }
    process.stdout.write(`\r${job.status} ${job.stage} ${job.progress_pct}% logs ${job.stage === "REPLAYING" ? job.logs_replayed : job.logs_processed}/${job.logs_total} eta ${job.estimated_seconds_remaining ?? "-"} s, RSS ${m.now} MB (peak ${m.peak})      `);
    if (!["queued", "validating", "inserting_patients", "inserting_logs", "replaying", "backfilling"].includes(job.status)) {
      tDone = now;
      break;
    }
  }
  if (stageOnly) {
    await call(svc.pool, svc.adminKey, "POST", `/v1/ingestion/jobs/${created.json.job_id}/cancel`);
    // The rollback (staged logs, created patients) may outlast the cancel's answer.
    while ((await call(svc.pool, svc.adminKey, "GET", `/v1/ingestion/jobs/${created.json.job_id}`)).json.status !== "cancelled") await new Promise((r) => setTimeout(r, 500));
  }
  console.log();
  const elapsed = (tDone - t0) / 1000;
  const cpu = svc.cpuSeconds() - cpu0;
  const rssAtEnd = rss(pid);
  const order = ["VALIDATING", "INSERTING_PATIENTS", "INSERTING_LOGS", "AWAITING_CONFIRMATION", "REPLAYING", "BACKFILLING"].filter((s) => stages[s] !== undefined);
  const perStage = Object.fromEntries(order.map((s, i) => [s, +(((order[i + 1] ? stages[order[i + 1]!]! : tDone) - stages[s]!) / 1000).toFixed(1)]));
  console.log(
    JSON.stringify(
      {
        logs,
        patients,
        file_mb: +(bytes / 1e6).toFixed(0),
        status: job.status,
        logs_staged: job.logs_staged,
        logs_processed: job.logs_processed,
        logs_failed: job.logs_failed,
        patients_created: job.patients_created,
        backfill_status: job.backfill_status,
        seconds: { upload: +((tUpload - t0) / 1000).toFixed(1), ...perStage, total: +elapsed.toFixed(1) },
        logs_per_second: Math.round((stageOnly ? job.logs_staged : job.logs_processed) / elapsed),
        service_peak_rss_mb: rssAtEnd.peak,
        peak_rss_mb_by_process: rssAtEnd.peakByProcess,
        service_peak_anon_rss_mb_sampled: peakAnon,
        service_file_rss_mb_at_end: rssAtEnd.file,
        cpu_cores: { service: +(cpu / elapsed).toFixed(2), nats_server: +((natsServerCpu() - nats0) / elapsed).toFixed(2) },
        speed_probe_ms: { before: probeBefore, after: speedProbeMs() },
      },
      null,
      2,
    ),
  );
} finally {
  await svc.stop();
  // Once the service is down, so its consumers do not see their streams go.
  const nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
  await destroyTopology(nc, svc.namespace);
  await nc.close();
  rmSync(dir, { recursive: true, force: true });
}
