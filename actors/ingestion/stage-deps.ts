import type { PatientStore } from "../../src/control/patients.js";
import { isAppError } from "../../src/errors.js";
import type { JobRecord } from "../../src/ingestion/job-record.js";
import type { StagingDeps } from "../../src/ingestion/staging.js";
import type { UploadStore } from "../../src/ingestion/uploads.js";
import type { LogWriter } from "../../src/logs/log-writer.js";
import type { PatientStateStore } from "../../infra/redis/state-store.js";
import type { ChunkOutcome, ReplayWriteInput } from "./replay-writes.js";

export interface Logger {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
}

/** What the stage actors use: adapters only, passed in (no singletons). */
export interface StageDeps {
  patients: PatientStore;
  logWriter: LogWriter;
  stateStore: PatientStateStore;
  uploads: UploadStore;
  staging: StagingDeps;
  log: Logger;
  /** How long BACKFILLING waits for a patient whose state does not advance. @default 300_000 (5 min) */
  backfillStallMs?: number;
  /** How long a stage retries storage that keeps failing before the job fails (tests make it short). @default STORAGE_RETRY_MS */
  storageRetryMs?: number;
  /** How long a rollback waits between fencing created patients and looking at their logs again. @default ROLLBACK_SETTLE_MS (500 ms) */
  rollbackSettleMs?: number;
  /** Staged text per replay bucket, in bytes (tests make it small to get many buckets). @default 4_194_304 (4 MiB) */
  bucketBytes?: number;
  /** Test hook: called before each replay write (a slow fake lets a test stop the service mid-replay). */
  beforeReplayChunk?: (jobId: string) => Promise<void>;
  /** Where REPLAYING's writes run (the service's replay thread); unset: through `logWriter`, in this thread. */
  replayWrites?: ReplayWrites;
}

/** Runs writePatients (actors/ingestion/replay-writes.ts) somewhere: reports each chunk's outcome. */
export interface ReplayWrites {
  write(input: ReplayWriteInput, signal: AbortSignal, onChunk: (outcome: ChunkOutcome) => void, beforeChunk?: () => Promise<void>): Promise<void>;
}

/**
 * A running job as its stage actors see it: the record they update in place (the runner
 * persists it about once a second), and ways to save now or wait for earlier work.
 */
export interface LiveJob {
  readonly record: JobRecord;
  /** Marks the record changed; the runner saves it within a second. */
  touch(): void;
  /** Saves the record now: a milestone a restart must see before the stage goes on. */
  save(): Promise<void>;
  /** Resolves once the stage work started before this call has settled (clean-up waits for a cancelled stage). */
  settled(): Promise<void>;
  /** Registers a stage's work, for settled(). */
  track<T>(work: Promise<T>): Promise<T>;
}

export type StageFn<I, O> = (deps: StageDeps, job: LiveJob, input: I, signal: AbortSignal) => Promise<O>;

/** What a failure says, whatever was thrown. */
export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("job stopped");
}

/** Runs `fn` over `items` with at most `limit` at once; stops starting new ones once aborted. */
export async function forEachLimited<T>(items: Iterable<T>, limit: number, signal: AbortSignal, fn: (item: T) => Promise<void>): Promise<void> {
  const it = items[Symbol.iterator]();
  let failure: unknown = null;
  const worker = async () => {
    while (failure === null && !signal.aborted) {
      const n = it.next();
      if (n.done) return;
      try {
        await fn(n.value);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what `fn` threw, as it was thrown
  if (failure !== null) throw failure;
  throwIfAborted(signal);
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });

/**
 * How long a stage's storage may keep failing before the job fails: a restart of NATS or
 * Redis (publish time-outs, a connection reconnecting, JetStream not answering yet) must
 * not end a job of hours, while a store that stays down should end it with its reason.
 */
export const STORAGE_RETRY_MS = 120_000;

/** A failure that no retry mends (a missing document, a patient whose state never advances). */
export class PermanentError extends Error {
  override name = "PermanentError";
}

/**
 * Runs `attempt` again after each failure, 1 s later, then 2, 4, up to 10 s between
 * tries, until `forMs` have passed since the first failure; `attempt` gets how many
 * failures came before it. It must be safe to run again after failing anywhere. What the
 * service refuses (an AppError) and a PermanentError fail at once, as does a stop.
 */
export async function retryStorage<T>(attempt: (failures: number) => Promise<T>, signal: AbortSignal, forMs = STORAGE_RETRY_MS): Promise<T> {
  let deadline = 0;
  for (let failures = 0, delay = 1_000; ; failures++, delay = Math.min(delay * 2, 10_000)) {
    try {
      return await attempt(failures);
    } catch (err) {
      if (signal.aborted || isAppError(err) || err instanceof PermanentError) throw err;
      deadline ||= Date.now() + forMs;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${errorMessage(err)} (still failing after ${forMs / 1000} s of retries)`, { cause: err });
      await sleep(Math.min(delay, left), signal);
      throwIfAborted(signal);
    }
  }
}

/** The names of a job's working documents in the staging stream. */
export const DOCS = {
  /** The file's valid patient rows: [line, data]. Written by VALIDATING. */
  rows: "rows",
  /** Per line, the patient a log feeds (src/ingestion/line-targets.ts). Written by VALIDATING. */
  targets: "targets",
  /** Existing patients that logs name, in the order targets refers to them. */
  existing: "existing",
  /** The first patients' valid logs by type: [target, {type: n}] (src/ingestion/patient-details.ts). Written by VALIDATING. */
  typeCounts: "type_counts",
  /** Where each patient row went: [line, id, created]. Written by INSERTING_PATIENTS. */
  patients: "patients",
  /** Every patient with staged logs. Written by INSERTING_LOGS; read by BACKFILLING. */
  replay: "replay",
  /** A FHIR file's converted rows: for each row, its line in the uploaded file (src/ingestion/fhir-file.ts). Written by VALIDATING. */
  fhirLines: "fhir_lines",
} as const;

export type RowDocRow = [line: number, data: Record<string, unknown>];
/** A row of the "patients" document: file line, patient id, created by this job (1) or reused (0). */
export type PatientDocRow = [line: number, id: string, created: 0 | 1];
