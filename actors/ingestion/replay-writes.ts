import type { LineError } from "../../src/ingestion/job-record.js";
import type { StagedLine } from "../../src/ingestion/staging.js";
import { canonicalTimestamp } from "../../readmodels/lib/time.js";
import { isObject } from "../../src/logs/envelope.js";
import type { LogWriter, WriteScope } from "../../src/logs/log-writer.js";
import { throwIfAborted } from "./stage-deps.js";

/** Logs per LogWriter.writeBatch call (whole patients, unless one patient has more). */
export const CHUNK = 1_000;

export interface Counts {
  processed: number;
  duplicates: number;
  failed: number;
}

/** What one chunk's write gave: its counts and the lines that failed. */
export interface ChunkOutcome extends Counts {
  errors: LineError[];
}

/** Some patients' staged logs, written together: each patient's entries, in any order. */
export type PatientLines = [patientId: string, entries: StagedLine[]][];

export interface ReplayWriteInput {
  scope: WriteScope;
  jobId: string;
  patients: PatientLines;
}

export interface Pending {
  key: string;
  line: number;
  log: Record<string, unknown>;
}

/**
 * Writes some patients' staged logs through LogWriter.writeBatch, each patient's sorted by
 * timestamp (then file line), in chunks of CHUNK, one after another: a patient with more
 * than a chunk gets a run of chunks written in order, so its logs never overtake each
 * other. Lines are parsed only here: the staged text is compact, parsed logs are not.
 * Runs in the replay's worker thread (replay-worker.ts), or in the job's own thread.
 */
export async function writePatients(
  writer: LogWriter,
  input: ReplayWriteInput,
  signal: AbortSignal,
  onChunk: (outcome: ChunkOutcome) => void,
  beforeChunk?: () => Promise<void>,
): Promise<void> {
  const logs: Pending[] = [];
  let repeats = 0;
  for (const [pid, entries] of input.patients) {
    const mine = stagedLogs(entries, pid, input.jobId);
    repeats += entries.length - mine.length;
    mine.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.line - b.line));
    for (const p of mine) logs.push(p);
  }
  if (repeats > 0) onChunk({ processed: repeats, duplicates: repeats, failed: 0, errors: [] });
  for (let i = 0; i < logs.length; i += CHUNK) {
    await beforeChunk?.();
    throwIfAborted(signal);
    onChunk(await writeChunk(writer, input.scope, logs.slice(i, i + CHUNK)));
  }
}

/**
 * A patient's staged lines as the logs the replay writes (one per idempotency_key, each
 * with its timestamp's sort key and file line): the envelopes LogWriter.writeBatch takes.
 */
export function stagedLogs(entries: readonly StagedLine[], patientId: string, jobId: string): Pending[] {
  return firstOfEachKey(entries.map((e) => pending(e, patientId, jobId)));
}

/**
 * A patient's lines without the later repeats of an idempotency_key: within a file the
 * first line with a key is the log, as the first log of a batch is. Writing in time order
 * would otherwise let a later line with an earlier timestamp claim the key first.
 */
function firstOfEachKey(lines: Pending[]): Pending[] {
  const first = new Map<string, Pending>();
  let repeated = false;
  for (const p of lines) {
    const k = p.log.idempotency_key;
    if (typeof k !== "string") continue;
    const seen = first.get(k);
    if (seen === undefined || p.line < seen.line) {
      if (seen !== undefined) repeated = true;
      first.set(k, p);
    } else repeated = true;
  }
  return repeated ? lines.filter((p) => typeof p.log.idempotency_key !== "string" || first.get(p.log.idempotency_key) === p) : lines;
}

function pending(e: StagedLine, patientId: string, jobId: string): Pending {
  const data = (JSON.parse(e.text) as { data: Record<string, unknown> }).data;
  // Set on the freshly parsed objects rather than spread into new ones (same keys, same
  // order): a spread followed by new keys gets a hidden class of its own every time in
  // V8, which made this function twice the cost of the parse (2.5 against 1.2 us a line).
  const metadata: Record<string, unknown> = isObject(data.metadata) ? data.metadata : {};
  metadata.ingestion_job_id = jobId;
  metadata.ingestion_line = e.line;
  data.patient_id = patientId;
  data.metadata = metadata;
  // Validation took a row without payload as an empty one (src/ingestion/file-rules.ts withPayload).
  if (data.payload === undefined) data.payload = {};
  return { key: canonicalTimestamp(data.timestamp) ?? "", line: e.line, log: data };
}

/**
 * Writes one chunk. A log JetStream could not store fails the chunk rather than counting
 * as failed: the stage writes the bucket again once the storage answers, and its patients'
 * histories say which lines this attempt did store (a re-publish of a log without an
 * idempotency key would store it twice).
 */
async function writeChunk(writer: LogWriter, scope: WriteScope, chunk: Pending[]): Promise<ChunkOutcome> {
  const ans = await writer.writeBatch(scope, chunk.map((p) => p.log), { source: "ingestion", atomic: false, at: (i) => ["line", chunk[i]!.line] });
  const lost = ans.errors.find((e) => e.code === "storage_error");
  if (lost) throw new Error(lost.message);
  const errors = ans.errors.map((e) => ({ line: chunk[e.index]!.line, code: e.code, message: e.message }));
  return { processed: ans.accepted + ans.duplicates, duplicates: ans.duplicates, failed: errors.length, errors };
}
