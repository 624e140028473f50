import { randomUUID } from "node:crypto";
import type { IngestionJob, JobListOptions, PatientStateClient } from "../../client/index.js";
import { arg, int, list, noMoreArgs, positiveInt, str, UsageError, type Command, type Io, type Values } from "../command.js";
import { bytes, confirm, json, ProgressBar, record, table } from "../output.js";

/** Exit code of a finished job: completed 0, completed_with_errors 3 (partial), anything else 1. */
function exitCode(job: IngestionJob): number {
  if (job.status === "completed") return 0;
  if (job.status === "completed_with_errors") return 3;
  return job.status === "awaiting_confirmation" ? 0 : 1;
}

function summary(job: IngestionJob, io: Io): void {
  const removed = job.patients_removed ? `, patients removed ${job.patients_removed} (${job.logs_removed ?? 0} logs)` : "";
  io.err(
    `job ${job.job_id}: ${job.status} (${job.stage}); patients created ${job.patients_created ?? 0}${removed}, ` +
      // Inserted logs are staged at the review and in patient state once replayed.
      `logs inserted ${job.logs_processed ?? 0}, replayed ${job.logs_replayed ?? 0}, failed ${job.logs_failed ?? 0}` +
      `${job.skip_backfill ? "; no view backfill" : ""}\n`,
  );
  if (job.status_message) io.err(`  ${job.status_message}\n`);
  const errs = Array.isArray(job.error_summary) ? job.error_summary : [];
  for (const e of errs.slice(0, 20)) io.err(`  line ${e.line}: ${e.code}: ${e.message}\n`);
  if (errs.length > 20) io.err(`  ... ${errs.length - 20} more (pss jobs get ${job.job_id} --json)\n`);
}

/** Polls the job with a progress bar until it is finished or awaits confirmation. */
const JOB_SUBCOMMANDS = ["list", "get", "wait", "patch", "remove-patient", "confirm", "cancel", "retry-backfill"];

/**
 * Follows a job, through a service restart: the job goes on there, so a poll that gets no
 * answer is tried again (for two minutes in a row), and past that the error says how to
 * pick the job up again.
 */
async function follow(c: PatientStateClient, id: string, io: Io, intervalMs: number, stopAtConfirmation = true): Promise<IngestionJob> {
  const bar = new ProgressBar(io, "job   ");
  let told = false;
  const job = await c.ingestion.waitForJob(id, {
    intervalMs,
    stopAtConfirmation,
    onProgress: (j) => {
      told = false;
      bar.update(j.progress_pct ?? 0, 100, j.stage_work ? `${j.stage} ${j.stage_work.done}/${j.stage_work.total} ${j.stage_work.unit}` : j.stage);
    },
    onUnreachable: (err) => {
      if (!told) io.err(`\n${err.message}: job ${id} goes on on the service; still asking\n`);
      told = true;
    },
  }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; job ${id} may still be running there: follow it with pss jobs wait ${id}`, { cause: err });
  });
  bar.done();
  return job;
}

/** At AWAITING_CONFIRMATION: confirm with --yes or on a "y" answer; else leave it waiting. */
async function review(c: PatientStateClient, job: IngestionJob, values: Values, io: Io, intervalMs: number): Promise<IngestionJob | null> {
  summary(job, io);
  const summaryTypes = list(values["summary-types"]);
  const yes = values.yes === true || (values["no-confirm"] !== true && (await confirm(io, `Confirm job ${job.job_id} and replay it into patient state?`)));
  if (!yes) {
    io.err(`Left awaiting confirmation. Later: pss jobs confirm ${job.job_id}  or  pss jobs cancel ${job.job_id}\n`);
    return null;
  }
  await c.ingestion.confirm(job.job_id, summaryTypes.length > 0 ? { summaryTypes } : {});
  // The confirmed job may still read awaiting_confirmation for a moment: wait for its end.
  return follow(c, job.job_id, io, intervalMs, false);
}

export const ingestCommand: Command = {
  name: "ingest",
  summary: "Upload a JSONL or FHIR NDJSON file as a historical ingestion job and follow it",
  help: `Usage: pss ingest FILE [--yes | --no-confirm] [--idempotency-key KEY]
                  [--summary-types V,...] [--rollback-on-cancel] [--interval-ms N]
                  [--format jsonl|fhir]

Uploads FILE (progress on stderr), creates the job, and follows it. When the job reaches
AWAITING_CONFIRMATION, its counts and line errors are shown and you are asked to confirm
(replay into patient state, then view backfill). Check a file first with pss validate.
FILE may hold JSONL rows or FHIR R4 resources and Bundles, one a line (a Bulk Data
export's NDJSON files, concatenated); the service tells them apart by the first line.

  --yes                 Confirm without asking
  --no-confirm          Do not confirm: leave the job awaiting (pss jobs confirm ID later)
  --idempotency-key K   A job-level key: the same key cannot start a second job
                        (default: a new random key, so a create retried after a lost
                        answer cannot start the job twice)
  --summary-types V,..  View types to backfill
  --rollback-on-cancel  Cancelling the job also removes the patients it created
  --interval-ms N       Poll interval (default 1000)
  --format F            jsonl or fhir, when the first line should not decide

Exit code: 0 completed (or left awaiting), 3 completed with errors, 1 failed or cancelled.`,
  options: {
    yes: { type: "boolean", short: "y" }, "no-confirm": { type: "boolean" }, "idempotency-key": { type: "string" },
    "summary-types": { type: "string", multiple: true }, "rollback-on-cancel": { type: "boolean" }, "interval-ms": { type: "string" }, format: { type: "string" },
  },
  async run({ args, values, io, client }) {
    const file = arg(args, 0, "FILE (the JSONL file to ingest)");
    noMoreArgs(args, 1, "pss ingest takes one FILE: ingest each file as a job of its own");
    if (values.yes && values["no-confirm"]) throw new UsageError("give --yes or --no-confirm, not both");
    const format = str(values.format) || undefined;
    if (format !== undefined && format !== "jsonl" && format !== "fhir") throw new UsageError("--format is jsonl or fhir");
    const intervalMs = int(values["interval-ms"], "interval-ms") ?? 1000;
    const c = await client();
    const up = new ProgressBar(io, "upload");
    const { s3_key, bytes: size } = await c.ingestion.uploadFile(file, { onProgress: (p) => up.update(p.loaded, p.total, `${bytes(p.loaded)}/${bytes(p.total)}`) });
    up.done();
    // Always keyed: the client retries a keyed create, and the key makes that safe.
    const key = str(values["idempotency-key"]) || `pss-ingest-${randomUUID()}`;
    const summaryTypes = list(values["summary-types"]);
    const created = await c.ingestion.createJob({
      s3_key,
      idempotency_key: key,
      ...(values["rollback-on-cancel"] ? { rollback_on_cancel: true } : {}),
      ...(format ? { format } : {}),
      ...(summaryTypes.length > 0 ? { summary_types: summaryTypes } : {}),
    });
    io.err(`uploaded ${bytes(size)}; job ${created.job_id} created\n`);
    let job = await follow(c, created.job_id, io, intervalMs);
    if (job.status === "awaiting_confirmation") {
      const after = await review(c, job, values, io, intervalMs);
      if (after === null) {
        if (values.json) io.out(`${json(job)}\n`);
        return 0;
      }
      job = after;
    }
    summary(job, io);
    if (values.json) io.out(`${json(job)}\n`);
    else io.out(`${job.job_id} ${job.status}\n`);
    return exitCode(job);
  },
};

export const jobsCommand: Command = {
  name: "jobs",
  summary: "Ingestion jobs: pss jobs list|get|wait|patch|remove-patient|confirm|cancel|retry-backfill",
  help: `Usage: pss jobs list [--status S] [--idempotency-key K] [--page N] [--page-size N]
       pss jobs get JOB_ID
       pss jobs wait JOB_ID            Follow until finished or awaiting confirmation
       pss jobs patch JOB_ID [--summary-types V,...] [--skip-backfill | --backfill]
                                       Change a job awaiting confirmation: the views to
                                       backfill, or no view backfill after the replay
       pss jobs remove-patient JOB_ID PATIENT_ID
                                       Take a patient out of a job awaiting confirmation:
                                       its staged logs go, and the patient if the job created it
       pss jobs confirm JOB_ID [--summary-types V,...]
       pss jobs cancel JOB_ID [--rollback | --no-rollback]
                                       --rollback also removes the patients the job
                                       created, --no-rollback keeps them; neither: the
                                       job's rollback_on_cancel decides
       pss jobs retry-backfill JOB_ID

list: --status is a job status (validating, awaiting_confirmation, completed, ...) or
"running" for every job at work; newest first, 20 a page unless --page-size says.

Exit code: 0 success, 1 failure; jobs wait: 0 completed (or awaiting confirmation),
3 completed with errors, 1 failed or cancelled.`,
  options: {
    status: { type: "string" }, limit: { type: "string" }, page: { type: "string" }, "page-size": { type: "string" }, "idempotency-key": { type: "string" },
    "summary-types": { type: "string", multiple: true }, "skip-backfill": { type: "boolean" }, backfill: { type: "boolean" },
    rollback: { type: "boolean" }, "no-rollback": { type: "boolean" },
  },
  async run({ args, values, io, client }) {
    const sub = arg(args, 0, `subcommand (${JOB_SUBCOMMANDS.join(", ")})`);
    if (!JOB_SUBCOMMANDS.includes(sub)) throw new UsageError(`unknown subcommand jobs ${sub}: use one of ${JOB_SUBCOMMANDS.join(", ")}`);
    noMoreArgs(args, sub === "list" ? 1 : sub === "remove-patient" ? 3 : 2, sub === "list" ? "pss jobs list takes no argument" : `see pss jobs --help for what jobs ${sub} takes`);
    const c = await client();
    const show = (j: IngestionJob) => io.out(values.json ? `${json(j)}\n` : `${record({ ...j })}\n`);
    if (sub === "list") {
      const pageSize = positiveInt(values["page-size"], "page-size") ?? positiveInt(values.limit, "limit");
      const page = positiveInt(values.page, "page");
      const status = str(values.status) as JobListOptions["status"];
      const key = str(values["idempotency-key"]);
      const r = await c.ingestion.listJobs({ ...(status ? { status } : {}), ...(key ? { idempotency_key: key } : {}), ...(page ? { page } : {}), ...(pageSize ? { pageSize } : {}) });
      const rows = r.jobs.map((j) => ({ job_id: j.job_id, status: j.status, stage: j.stage, progress_pct: j.progress_pct, logs_processed: j.logs_processed, logs_failed: j.logs_failed, created_at: j.created_at }));
      io.out(values.json ? `${json(r)}\n` : `${table(rows)}\n`);
      if (!values.json && r.has_more) io.err(`page ${r.page} of ${Math.ceil(r.total / r.page_size)} (${r.total} jobs): --page ${r.page + 1} for more\n`);
      return 0;
    }
    const id = arg(args, 1, "JOB_ID");
    switch (sub) {
      case "get":
        show(await c.ingestion.getJob(id));
        return 0;
      case "wait": {
        const job = await follow(c, id, io, 1000);
        show(job);
        return exitCode(job);
      }
      case "patch": {
        if (values["skip-backfill"] && values.backfill) throw new UsageError("give --skip-backfill or --backfill, not both");
        const types = list(values["summary-types"]);
        const skip = values["skip-backfill"] ? true : values.backfill ? false : undefined;
        if (types.length === 0 && skip === undefined) throw new UsageError("nothing to change: give --summary-types, --skip-backfill or --backfill");
        show(await c.ingestion.patchJob(id, { ...(types.length > 0 ? { summary_types: types } : {}), ...(skip !== undefined ? { skip_backfill: skip } : {}) }));
        return 0;
      }
      case "remove-patient":
        show(await c.ingestion.removePatient(id, arg(args, 2, "PATIENT_ID")));
        return 0;
      case "confirm": {
        const types = list(values["summary-types"]);
        show(await c.ingestion.confirm(id, types.length > 0 ? { summaryTypes: types } : {}));
        return 0;
      }
      case "cancel": {
        if (values.rollback && values["no-rollback"]) throw new UsageError("give --rollback or --no-rollback, not both");
        const rollback = values.rollback ? true : values["no-rollback"] ? false : undefined;
        show(await c.ingestion.cancel(id, rollback !== undefined ? { rollback } : {}));
        return 0;
      }
      case "retry-backfill":
        show(await c.ingestion.retryBackfill(id));
        return 0;
      default:
        throw new UsageError(`unknown subcommand jobs ${sub}`);
    }
  },
};
