import { addLineError, type ReplayCursor } from "../../../src/ingestion/job-record.js";
import { markReplayed } from "../../../src/ingestion/patient-details.js";
import { purgeStaging, readBucket, type StagedLine } from "../../../src/ingestion/staging.js";
import { PatientLog } from "../../../src/logs/patient-log.js";
import type { StageInput } from "../job-machine.js";
import { CHUNK, writePatients, type Counts, type PatientLines } from "../replay-writes.js";
import { rowSource } from "../row-source.js";
import { forEachLimited, retryStorage, type LiveJob, type StageDeps, type StageFn, type ReplayWrites } from "../stage-deps.js";

/** Buckets replayed at once (each holds a few MB of staged text in memory). */
const BUCKETS_AT_ONCE = 2;
/** LogWriter.writeBatch calls in flight per bucket: keeps the ledger's group commits full. */
const WRITES_AT_ONCE = 4;
/** Staged text of one bucket held before writing; past it (one huge patient) the rest comes after. */
const GROUP_CHARS = 16 * 1024 * 1024;

type Progress = (d: Counts) => void;
type LineOf = (row: number) => number;

function add(c: Counts, d: Counts): void {
  c.processed += d.processed;
  c.duplicates += d.duplicates;
  c.failed += d.failed;
}

/**
 * REPLAYING: staging bucket by bucket, each patient's staged logs sorted by timestamp
 * (then file line) go through LogWriter.writeBatch, the path of POST /v1/logs/batch:
 * per-log idempotency keys deduplicate against everything already stored, and the state
 * engine applies them (a live log arriving meanwhile lands by its timestamp, the engine
 * replaying the patient when needed). Each stored log carries `metadata.ingestion_job_id`
 * and `ingestion_line`: that is how a resumed replay knows what it already wrote.
 * Patients taken out of the job under review are passed by. logs_replayed counts what
 * is written; logs_processed stays the staged logs less those that could not be stored.
 * A bucket whose storage failed (NATS restarting, a publish time-out) is written again
 * the same way, its counts taken back first, for up to StageDeps.storageRetryMs.
 */
export const replayStage: StageFn<StageInput, void> = async (deps, job, input, signal) => {
  const r = job.record;
  const buckets = r.replay_buckets;
  const cursor: ReplayCursor = r.replay ?? { done_below: 0, claimed_to: 0, processed: 0, duplicates: 0, failed: 0, failed_before: r.logs_failed };
  r.replay = cursor;
  const retry = <T>(attempt: (failures: number) => Promise<T>) => retryStorage(attempt, signal, deps.storageRetryMs);
  await retry(() => job.save());
  // Line errors name the uploaded file's lines (a FHIR file's rows are not its lines).
  const { lineOf } = await retry(() => rowSource(deps, job));
  const suspectTo = cursor.claimed_to;
  const start: Counts = { processed: cursor.processed, duplicates: cursor.duplicates, failed: cursor.failed };
  const run: Counts = { processed: 0, duplicates: 0, failed: 0 };
  // The cursor counts whole buckets only: a resumed run (or a retried bucket) counts again
  // what was written past it. Until the end, the counts shown never drop below what was
  // shown already; the last call sets them exactly.
  const progress = (d: Counts, exact = false) => {
    add(run, d);
    const shown = (now: number, before: number) => (exact ? now : Math.max(now, before));
    r.logs_replayed = shown(start.processed + run.processed, r.logs_replayed);
    r.logs_duplicate = shown(start.duplicates + run.duplicates, r.logs_duplicate);
    r.logs_failed = cursor.failed_before + start.failed + run.failed;
    r.logs_processed = r.logs_staged - start.failed - run.failed;
    r.stage_fraction = shown(r.logs_staged > 0 ? (start.processed + run.processed + start.failed + run.failed) / r.logs_staged : 1, r.stage_fraction);
    job.touch();
  };
  let claiming: Promise<void> | null = null;
  /** Claimed buckets a save has recorded: a save that failed is made again by the bucket's next attempt. */
  let savedTo = cursor.claimed_to;
  const claim = async (i: number) => {
    while (savedTo <= i) {
      // Saved before the bucket starts: a restart re-checks only claimed buckets.
      claiming ??= (async () => {
        const to = (cursor.claimed_to = Math.max(cursor.claimed_to, Math.min(buckets, i + 1)));
        await job.save();
        savedTo = Math.max(savedTo, to);
      })().finally(() => (claiming = null));
      await claiming;
    }
  };
  const finished = new Map<number, Counts>();
  const order = Array.from({ length: buckets - cursor.done_below }, (_, k) => cursor.done_below + k);
  const replayAll = forEachLimited(order, BUCKETS_AT_ONCE, signal, async (i) => {
    const errorLines = new Set<number>();
    const counts = await retry(async (failures) => {
      await claim(i);
      // After a failure, some of its logs may be stored, as after a restart.
      return replayBucket(deps, job, input, i, i < suspectTo || failures > 0, signal, progress, errorLines, lineOf);
    });
    finished.set(i, counts);
    for (let next = finished.get(cursor.done_below); next !== undefined; next = finished.get(cursor.done_below)) {
      add(cursor, next);
      finished.delete(cursor.done_below++);
    }
  });
  await replayAll.catch((err: unknown) => {
    // A failed replay ends the job: its counts are then exact. A stop keeps what was shown for the resumed run.
    if (!signal.aborted) progress({ processed: 0, duplicates: 0, failed: 0 }, true);
    throw err;
  });
  await retry(() => purgeStaging(deps.staging, input.job_id));
  progress({ processed: 0, duplicates: 0, failed: 0 }, true);
  await retry(() => job.save());
};

/**
 * One bucket; `suspect`: it may have been partly written before (a restart, a failed
 * attempt). A failed attempt takes back what it counted; `errorLines`, the lines whose
 * errors the bucket reported, keeps the next attempt from listing them again.
 */
async function replayBucket(deps: StageDeps, job: LiveJob, input: StageInput, bucket: number, suspect: boolean, signal: AbortSignal, progress: Progress, errorLines: Set<number>, lineOf: LineOf): Promise<Counts> {
  const total: Counts = { processed: 0, duplicates: 0, failed: 0 };
  const counted: Progress = (d) => {
    add(total, d);
    progress(d);
  };
  try {
    let group = new Map<string, StagedLine[]>();
    let chars = 0;
    // A line staged twice is written once: a publish of a failed INSERTING_LOGS run may
    // land after the next run emptied the staging area.
    const seen = new Set<number>();
    const removed = new Set(job.record.removed_patients);
    for await (const part of readBucket(deps.staging, input.job_id, bucket, signal)) {
      for (const e of part) {
        if (seen.has(e.line) || removed.has(e.patient)) continue;
        seen.add(e.line);
        const list = group.get(e.patient);
        if (list) list.push(e);
        else group.set(e.patient, [e]);
        chars += e.text.length;
      }
      if (chars >= GROUP_CHARS) {
        await writeGroup(deps, job, input, group, suspect, signal, counted, errorLines, lineOf);
        group = new Map();
        chars = 0;
      }
    }
    await writeGroup(deps, job, input, group, suspect, signal, counted, errorLines, lineOf);
    return total;
  } catch (err) {
    progress({ processed: -total.processed, duplicates: -total.duplicates, failed: -total.failed });
    throw err;
  }
}

/**
 * Writes the logs of some patients in tasks of whole patients (about CHUNK logs each),
 * WRITES_AT_ONCE tasks at a time; writePatients sorts and writes each task's logs.
 */
async function writeGroup(deps: StageDeps, job: LiveJob, input: StageInput, group: Map<string, StagedLine[]>, suspect: boolean, signal: AbortSignal, progress: Progress, errorLines: Set<number>, lineOf: LineOf): Promise<void> {
  const stored = new Map<string, Set<number>>();
  if (suspect) await forEachLimited(group.keys(), 16, signal, async (pid) => void stored.set(pid, await linesStored(deps, input, pid)));
  const tasks: PatientLines[] = [];
  let unit: PatientLines = [];
  let unitSize = 0;
  for (const [pid, all] of [...group].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const done = stored.get(pid);
    // Stored before the restart: counted once, here, not written again.
    const entries = done ? all.filter((e) => !done.has(e.line)) : all;
    if (entries.length < all.length) progress({ processed: all.length - entries.length, duplicates: 0, failed: 0 });
    if (unitSize + entries.length > CHUNK && unit.length > 0) {
      tasks.push(unit);
      unit = [];
      unitSize = 0;
    }
    unit.push([pid, entries]);
    unitSize += entries.length;
  }
  if (unit.length > 0) tasks.push(unit);
  const scope = { organization_id: input.organization_id, project_id: input.project_id };
  await forEachLimited(tasks, WRITES_AT_ONCE, signal, async (patients) => {
    const hook = deps.beforeReplayChunk;
    const beforeChunk = hook ? () => hook(input.job_id) : undefined;
    const failedPatients = new Set<string>();
    await replayWrites(deps).write({ scope, jobId: input.job_id, patients }, signal, (o) => {
      for (const e of o.errors) {
        const owner = patients.find(([, entries]) => entries.some((x) => x.line === e.line));
        if (owner) failedPatients.add(owner[0]);
        if (errorLines.has(e.line)) continue;
        errorLines.add(e.line);
        addLineError(job.record, { ...e, line: lineOf(e.line) });
      }
      progress({ processed: o.processed, duplicates: o.duplicates, failed: o.failed });
    }, beforeChunk);
    markReplayed(job.record, patients.map(([pid]) => pid), failedPatients);
  });
}

/** Where the writes run: the replay's worker thread when the service has one, else here. */
function replayWrites(deps: StageDeps): ReplayWrites {
  return deps.replayWrites ?? { write: (input, signal, onChunk, beforeChunk) => writePatients(deps.logWriter, input, signal, onChunk, beforeChunk) };
}

/** File lines of this job already in the patient's stored history. */
async function linesStored(deps: StageDeps, input: StageInput, patientId: string): Promise<Set<number>> {
  const lines = new Set<number>();
  const owner = { organization_id: input.organization_id, project_id: input.project_id, patient_id: patientId };
  for await (const log of new PatientLog(deps.staging).logs(owner)) {
    if (log.metadata?.ingestion_job_id === input.job_id && typeof log.metadata.ingestion_line === "number") lines.add(log.metadata.ingestion_line);
  }
  return lines;
}
