import type { Readable } from "node:stream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { JobControl, JobController } from "./job-control.js";
import { AppError, notFound, type ErrorCode, type ErrorDetail } from "../errors.js";
import { newId } from "../ids.js";
import { isViewType, VIEW_TYPES } from "../../readmodels/views/index.js";
import { newJobRecord, TERMINAL, type JobFormat, type JobRecord } from "./job-record.js";
import { matchesStatus, type StatusFilter } from "./job-view.js";
import type { JobStore } from "./job-store.js";
import { UploadStore, type UploadToken } from "./uploads.js";

/** Most inline records one POST /v1/ingestion/jobs may carry. */
export const MAX_INLINE_RECORDS = 50_000;

export interface NewJobRequest {
  s3_key?: string;
  records?: unknown[];
  idempotency_key?: string;
  /** "fhir": FHIR resources or Bundles, one a line; "jsonl": patient and log rows. Absent: sniffed from the first line. */
  format?: JobFormat;
  require_confirmation?: boolean;
  rollback_on_cancel?: boolean;
  summary_types?: string[];
  view_types?: string[];
  /**
   * The hosted product's per-patient cap on logs its view backfill reads. Accepted and
   * ignored: views here are folded from every log of a patient.
   */
  max_event_logs?: number;
}

/** Which jobs a list shows: `status` and `idempotency_key` filter; `offset`/`limit` page the matches, newest first. */
export interface JobListQuery {
  status?: StatusFilter;
  idempotency_key?: string;
  offset: number;
  limit: number;
}

type Scope = { organization_id: string; project_id: string };

/** Checks view types named for backfill; `view_types` is the spec's name for them. */
export function viewTypesOf(body: { summary_types?: string[]; view_types?: string[] }): string[] | null {
  const types = body.summary_types ?? body.view_types;
  if (types === undefined) return null;
  const field = body.summary_types !== undefined ? "summary_types" : "view_types";
  const bad = types.filter((t) => !isViewType(t));
  if (bad.length > 0) {
    throw new AppError("validation", `unknown view type(s) ${bad.join(", ")}; known: ${VIEW_TYPES.join(", ")}`, [
      { type: "value_error", message: `known view types: ${VIEW_TYPES.join(", ")}`, field, location: ["body", field], input_value: bad },
    ]);
  }
  return [...new Set(types)];
}

/**
 * What the ingestion routes do: upload URLs and uploads, job creation (with job-level
 * idempotency), reads, and control. Control goes to the job runner: in this process
 * when it runs jobs, else over NATS to the process that does (from an api process).
 */
export class IngestionService {
  constructor(
    private readonly deps: {
      store: JobStore;
      uploads: UploadStore;
      /** The job runner of this process while it runs the namespace's jobs (it holds their lease), else null. */
      runner: () => JobController | null;
      nc: NatsConnection;
      /**
       * The NATS subject the runner of the current `jobs` lease tenure answers control
       * requests on (null: no member holds the lease now). A subject per tenure: a holder
       * whose lease lapsed while it was paused still listens on its own, and must not be
       * handed requests its successor should answer.
       */
      controlSubject: () => Promise<string | null>;
      /** Largest upload, in bytes. */
      maxUploadBytes: number;
      /** Throws when an upload URL's issuer can no longer write: its key revoked, its project deprecated. */
      admitUpload?: (t: UploadToken) => Promise<void>;
    },
  ) {}

  issueUpload(scope: Scope) {
    return this.deps.uploads.issue(scope);
  }

  /** Streams a PUT body into the object store under the token's key, counting bytes as they pass. */
  async receiveUpload(token: string, body: Readable): Promise<{ s3_key: string; size: number }> {
    const spent = await this.deps.uploads.spend(token, this.deps.admitUpload);
    const max = this.deps.maxUploadBytes;
    let tooLarge = false;
    // Pulled: the next chunk is read from the socket only when the store asks for it.
    async function* counted(): AsyncGenerator<Uint8Array> {
      let size = 0;
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > max) {
          tooLarge = true;
          throw new Error("upload too large");
        }
        yield chunk;
      }
    }
    try {
      const info = await this.deps.uploads.write(spent.s3_key, counted());
      return { s3_key: spent.s3_key, size: info.size };
    } catch (err) {
      await this.deps.uploads.delete(spent.s3_key);
      await this.deps.uploads.release(token, spent);
      if (tooLarge) throw new AppError("payload_too_large", `the file is larger than ${max} bytes`);
      throw err;
    }
  }

  async createJob(scope: Scope, body: NewJobRequest): Promise<JobRecord> {
    const hasKey = body.s3_key !== undefined;
    if (hasKey === (body.records !== undefined)) {
      throw new AppError("validation", "give exactly one of s3_key (an uploaded file) or records (inline rows)", [
        { type: "value_error", message: "exactly one of s3_key or records is required", field: "s3_key", location: ["body", "s3_key"], input_value: body.s3_key },
      ]);
    }
    const summary_types = viewTypesOf(body);
    const job_id = newId("job");
    let source: JobRecord["source"];
    const key = body.s3_key;
    if (key !== undefined) {
      // The key names its project: another project's upload is "not found", like anything of theirs.
      const info = UploadStore.isUploadOf(key, scope.project_id) ? await this.deps.uploads.info(key) : null;
      if (!info) {
        throw new AppError("not_found", `no file was uploaded under s3_key ${key} (or its upload failed): PUT the file to the upload_url from POST /v1/ingestion/upload-url, then create the job`);
      }
      source = { object: key, inline: false, bytes: info.size, ...(body.format ? { format: body.format } : {}) };
    } else {
      const text = body.records!.map((r) => JSON.stringify(r ?? null)).join("\n");
      const object = `inline/${scope.project_id}/${job_id}.jsonl`;
      source = { object, inline: true, bytes: (await this.deps.uploads.writeText(object, text)).size, ...(body.format ? { format: body.format } : {}) };
    }
    const record = newJobRecord(
      {
        job_id,
        ...scope,
        require_confirmation: body.require_confirmation ?? true,
        rollback_on_cancel: body.rollback_on_cancel ?? false,
        idempotency_key: body.idempotency_key ?? null,
        summary_types,
        source,
      },
      new Date().toISOString(),
    );
    try {
      await this.deps.store.create(record);
    } catch (err) {
      if (source.inline) await this.deps.uploads.delete(source.object);
      throw err;
    }
    await this.control({ op: "wake", project_id: scope.project_id, job_id }).catch(() => undefined);
    return record;
  }

  async get(projectId: string, jobId: string): Promise<JobRecord> {
    const r = await this.deps.store.get(projectId, jobId);
    if (!r) throw notFound("ingestion job", jobId);
    return r;
  }

  async list(projectId: string, q: JobListQuery): Promise<{ total: number; jobs: JobRecord[] }> {
    const all = (await this.deps.store.list(projectId)).filter(
      (j) => (q.status === undefined || matchesStatus(j, q.status)) && (q.idempotency_key === undefined || j.idempotency_key === q.idempotency_key),
    );
    return { total: all.length, jobs: all.slice(q.offset, q.offset + q.limit) };
  }

  /**
   * Ends a project's unfinished jobs before the project is deleted, and answers all its
   * jobs. A job still before its replay is cancelled; one whose replay or view backfill
   * runs cannot be stopped halfway, so the deletion is refused (409) until it ends.
   */
  async stopProjectJobs(projectId: string): Promise<JobRecord[]> {
    const jobs = await this.deps.store.list(projectId);
    for (const j of jobs) {
      const running = j.backfill_status === "running" ? "view backfill" : !TERMINAL.has(j.status) && (j.stage === "REPLAYING" || j.stage === "BACKFILLING") ? "replay" : null;
      if (running) {
        throw new AppError("conflict", `ingestion job ${j.job_id} of this project is running its ${running}, which cannot be stopped halfway; send the DELETE again once the job has ended`, [
          { type: "job_running", message: `job ${j.job_id} is in ${j.stage}`, job_id: j.job_id, status: j.status, stage: j.stage },
        ]);
      }
      if (TERMINAL.has(j.status)) continue;
      const after = await this.control({ op: "cancel", project_id: projectId, job_id: j.job_id });
      if (!TERMINAL.has(after.status)) {
        throw new AppError("unavailable", `ingestion job ${j.job_id} of this project is still being cancelled; send the DELETE again shortly`);
      }
    }
    return jobs;
  }

  /** Erases a deleted project's job records, job idempotency keys, files and upload URLs. */
  async eraseProject(projectId: string): Promise<void> {
    await this.deps.store.eraseProject(projectId);
    await this.deps.uploads.eraseProject(projectId);
  }

  /** The subject the job runner answers control requests on now (null: no member runs jobs now). */
  runnerSubject(): Promise<string | null> {
    return this.deps.controlSubject();
  }

  /** Confirm, cancel, retry-backfill, revise, remove a patient (and "wake" after a create): the job afterwards. */
  async control(c: JobControl): Promise<JobRecord> {
    const runner = this.deps.runner();
    if (runner) return (await runner.control(c)) ?? (await this.get(c.project_id, c.job_id));
    const unavailable = (cause: unknown) => new AppError("unavailable", "the ingestion job runner does not answer; retry shortly", [], { cause });
    const subject = await this.deps.controlSubject().catch((err: unknown) => {
      throw unavailable(err);
    });
    if (subject === null) throw unavailable(new Error("no member holds the jobs lease now"));
    const reply = await this.deps.nc.request(subject, JSON.stringify(c), { timeout: 35_000 }).catch((err: unknown) => {
      throw unavailable(err);
    });
    const a = reply.json<{ ok: true; job: JobRecord | null } | { ok: false; code: ErrorCode; message: string; details: ErrorDetail[] }>();
    if (!a.ok) throw new AppError(a.code, a.message, a.details ?? []);
    return a.job ?? (await this.get(c.project_id, c.job_id));
  }
}
