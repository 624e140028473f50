import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import { ConflictError, isRetryable, PssError, RateLimitError } from "./errors.js";
import type { Transport } from "./http.js";
import type { IngestionJob, JobCancel, JobChanges, JobPreview, JobInput, JobList, JobListOptions, JobStatus, UploadUrl } from "./types.js";

export interface UploadProgress {
  /** Bytes sent so far. */
  loaded: number;
  /** File size in bytes. */
  total: number;
}

export interface UploadOptions {
  onProgress?: (p: UploadProgress) => void;
  /** Content type of the PUT. @default "application/x-ndjson" */
  contentType?: string;
  /**
   * Whole uploads tried, each with a fresh one-time URL, on network failures and 5xx. A
   * 429 (and a refused connection) is retried on the same URL by the transport, after
   * the Retry-After, as every call is. @default 3
   */
  attempts?: number;
  signal?: AbortSignal;
}

/** A job is finished in these statuses; awaiting_confirmation waits for a person. */
export const FINAL_JOB_STATUSES: readonly string[] = ["completed", "completed_with_errors", "failed", "cancelled"] satisfies JobStatus[];

const seg = encodeURIComponent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stages a job reaches only after it was confirmed (or needed no confirmation). */
const AFTER_CONFIRMATION: ReadonlySet<string> = new Set(["REPLAYING", "BACKFILLING"]);

/** Historical ingestion (scope sdk:historical-ingest): upload a JSONL file, run it as a job, confirm it. */
export class IngestionApi {
  constructor(private readonly t: Transport) {}

  /**
   * Uploads a JSONL file, streamed (files of gigabytes are fine): asks for a one-time URL,
   * then PUTs the file there. Returns the `s3_key` to pass to `createJob`.
   */
  async uploadFile(path: string, o: UploadOptions = {}): Promise<{ s3_key: string; bytes: number }> {
    const total = (await stat(path)).size;
    const attempts = o.attempts ?? 3;
    for (let attempt = 1; ; attempt++) {
      try {
        // A second one-time URL costs nothing: asking again is safe.
        const { upload_url, s3_key } = await this.t.request<UploadUrl>("POST", "/v1/ingestion/upload-url", {
          body: {},
          idempotent: true,
          ...(o.signal ? { signal: o.signal } : {}),
        });
        const target = new URL(upload_url, this.t.baseUrl + "/");
        // The one-time URL authorizes itself; the credential goes only to the service's own origin.
        const sameOrigin = target.origin === new URL(this.t.baseUrl).origin;
        await this.t.request("PUT", target.href, {
          rawBody: () => countingStream(path, total, o.onProgress),
          headers: { "content-type": o.contentType ?? "application/x-ndjson" },
          auth: sameOrigin,
          // The URL takes one upload: after a lost answer a second PUT would be refused, so
          // only failures that prove nothing was received retry it (a 429, after its Retry-After).
          idempotent: false,
          timeoutMs: 0,
          ...(o.signal ? { signal: o.signal } : {}),
        });
        return { s3_key, bytes: total };
      } catch (err) {
        // A 429 the transport gave up on waited its Retry-After already, or asked for longer than allowed.
        if (attempt >= attempts || !isRetryable(err) || err instanceof RateLimitError) throw err;
        await sleep(500 * 2 ** attempt);
      }
    }
  }

  /**
   * Starts a job from an uploaded file (`s3_key`) or inline `records`. ConflictError for a
   * used idempotency_key. Retried after a lost answer only with an idempotency_key: the
   * retry's 409 then names the job the first attempt created, which is returned.
   */
  createJob(input: JobInput): Promise<IngestionJob> {
    const keyed = input.idempotency_key !== undefined;
    return this.t.request<IngestionJob>("POST", "/v1/ingestion/jobs", {
      body: input,
      idempotent: keyed,
      afterUncertainRetry: async (err) => {
        const holder = err instanceof ConflictError ? err.details.find((d) => d.type === "duplicate_idempotency_key")?.job_id : undefined;
        return typeof holder === "string" ? this.getJob(holder) : undefined;
      },
    });
  }
  /** Uploads a file and starts its job. */
  async ingestFile(path: string, input: Omit<JobInput, "s3_key" | "records"> = {}, o: UploadOptions = {}): Promise<IngestionJob> {
    const { s3_key } = await this.uploadFile(path, o);
    return this.createJob({ ...input, s3_key });
  }
  getJob(jobId: string): Promise<IngestionJob> {
    return this.t.request("GET", `/v1/ingestion/jobs/${seg(jobId)}`);
  }
  /** A page of the project's jobs, newest first; `status` ("running": every job at work) and `idempotency_key` filter. */
  listJobs(o: JobListOptions = {}): Promise<JobList> {
    return this.t.request("GET", "/v1/ingestion/jobs", { query: { ...o } });
  }
  /**
   * Changes what confirming a job awaiting confirmation will do: the view types to
   * backfill, or no backfill (`skip_backfill`). ConflictError once the job left the review.
   */
  patchJob(jobId: string, changes: JobChanges): Promise<IngestionJob> {
    return this.t.request("PATCH", `/v1/ingestion/jobs/${seg(jobId)}`, { body: changes, idempotent: true });
  }
  /**
   * What confirming a job awaiting confirmation would change, for a sample of its patients
   * (`limit`, default 5, at most 20) or one of them (`patientId`): per patient, the modules
   * and fields that would change, as `state.diff` answers. Writes nothing. Needs
   * sdk:state-read besides sdk:historical-ingest (it shows stored state). ConflictError
   * once the job left the review.
   */
  previewJob(jobId: string, o: { patientId?: string; limit?: number } = {}): Promise<JobPreview> {
    return this.t.request("GET", `/v1/ingestion/jobs/${seg(jobId)}/preview`, { query: { ...(o.patientId !== undefined ? { patient_id: o.patientId } : {}), ...(o.limit !== undefined ? { limit: o.limit } : {}) } });
  }
  /**
   * Takes a patient out of a job awaiting confirmation: its staged logs are dropped, and
   * the patient deleted if the job created it. Safe to repeat. Returns the job.
   */
  removePatient(jobId: string, patientId: string): Promise<IngestionJob> {
    return this.t.request("DELETE", `/v1/ingestion/jobs/${seg(jobId)}/patients/${seg(patientId)}`, { idempotent: true });
  }
  /**
   * Resumes a job in AWAITING_CONFIRMATION: replay into patient state, then backfill the
   * views named (or the job's). Retried like a read: when a retry's 409 finds the job
   * replaying or beyond, the lost first attempt confirmed it and the job is returned.
   */
  confirm(jobId: string, o: { summaryTypes?: string[] } = {}): Promise<IngestionJob> {
    return this.t.request<IngestionJob>("POST", `/v1/ingestion/jobs/${seg(jobId)}/confirm`, {
      body: o.summaryTypes ? { summary_types: o.summaryTypes } : {},
      idempotent: true,
      afterUncertainRetry: async (err) => {
        if (!(err instanceof ConflictError)) return undefined;
        const job = await this.getJob(jobId);
        return AFTER_CONFIRMATION.has(job.stage) ? job : undefined;
      },
    });
  }
  /**
   * Cancels a job before its replay. `rollback` true also removes the patients it created,
   * false keeps them; absent, the job's rollback_on_cancel decides. Cancelling a cancelled
   * job returns it.
   */
  cancel(jobId: string, o: JobCancel = {}): Promise<IngestionJob> {
    return this.t.request<IngestionJob>("POST", `/v1/ingestion/jobs/${seg(jobId)}/cancel`, {
      body: o.rollback !== undefined ? { rollback: o.rollback } : {},
      idempotent: true,
      afterUncertainRetry: async (err) => {
        if (!(err instanceof ConflictError)) return undefined;
        // A 409 before replay means the lost attempt's cancel is still under way.
        let job = await this.getJob(jobId);
        if (!FINAL_JOB_STATUSES.includes(job.status) && !AFTER_CONFIRMATION.has(job.stage)) {
          job = await this.waitForJob(jobId, { stopAtConfirmation: false, intervalMs: 250, timeoutMs: 30_000 }).catch(() => job);
        }
        return job.status === "cancelled" ? job : undefined;
      },
    });
  }
  /** Runs a failed or deferred view backfill again. A retry's "already running" 409 after a lost answer returns the job. */
  retryBackfill(jobId: string): Promise<IngestionJob> {
    return this.t.request<IngestionJob>("POST", `/v1/ingestion/jobs/${seg(jobId)}/retry-backfill`, {
      body: {},
      idempotent: true,
      afterUncertainRetry: async (err) => {
        if (!(err instanceof ConflictError)) return undefined;
        const job = await this.getJob(jobId);
        return job.backfill_status === "running" ? job : undefined;
      },
    });
  }

  /**
   * Polls a job until it is finished, or awaits confirmation (unless `stopAtConfirmation`
   * is false, as after `confirm`), or `until` says stop. onProgress gets every polled
   * state. intervalMs @default 1_000; timeoutMs @default none; stopAtConfirmation @default true.
   * The job runs on the service whatever its poller does, so a poll that fails for a
   * retryable reason (the service restarting, a 503) is tried again at the next interval,
   * until polls have failed for `unreachableMs` in a row (@default 120_000); onUnreachable
   * hears of each such failure.
   */
  async waitForJob(
    jobId: string,
    o: {
      onProgress?: (job: IngestionJob) => void; intervalMs?: number; timeoutMs?: number; stopAtConfirmation?: boolean; until?: (job: IngestionJob) => boolean;
      unreachableMs?: number; onUnreachable?: (err: PssError) => void;
    } = {},
  ): Promise<IngestionJob> {
    const atConfirmation = o.stopAtConfirmation !== false;
    const done = o.until ?? ((j: IngestionJob) => FINAL_JOB_STATUSES.includes(j.status) || (atConfirmation && j.status === "awaiting_confirmation"));
    const deadline = o.timeoutMs !== undefined ? Date.now() + o.timeoutMs : Number.POSITIVE_INFINITY;
    let failingSince: number | null = null;
    for (;;) {
      let job: IngestionJob;
      try {
        job = await this.getJob(jobId);
        failingSince = null;
      } catch (err) {
        if (!isRetryable(err)) throw err;
        failingSince ??= Date.now();
        if (Date.now() - failingSince >= (o.unreachableMs ?? 120_000) || Date.now() >= deadline) throw err;
        o.onUnreachable?.(err as PssError);
        await sleep(o.intervalMs ?? 1_000);
        continue;
      }
      o.onProgress?.(job);
      if (done(job)) return job;
      if (Date.now() >= deadline) {
        throw new PssError(`job ${jobId} is still ${job.status} (${job.stage}) after ${o.timeoutMs} ms`, { status_code: 0, error_type: "timeout_error", body: job });
      }
      await sleep(o.intervalMs ?? 1_000);
    }
  }
}

/** The file as a web stream that reports bytes as they are read. */
function countingStream(path: string, total: number, onProgress?: (p: UploadProgress) => void): ReadableStream<Uint8Array> {
  let loaded = 0;
  const file = Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>;
  onProgress?.({ loaded, total });
  return file.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, ctl) {
        loaded += chunk.byteLength;
        onProgress?.({ loaded, total });
        ctl.enqueue(chunk);
      },
    }),
  );
}
