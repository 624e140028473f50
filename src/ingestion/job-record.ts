import { Type } from "@sinclair/typebox";
import { Nullable } from "../http/schemas.js";

export const STAGES = ["QUEUED", "VALIDATING", "INSERTING_PATIENTS", "INSERTING_LOGS", "AWAITING_CONFIRMATION", "REPLAYING", "BACKFILLING"] as const;
export type Stage = (typeof STAGES)[number];

export const STATUSES = ["queued", "running", "awaiting_confirmation", "completed", "completed_with_errors", "failed", "cancelled"] as const;
export type JobStatus = (typeof STATUSES)[number];

export const TERMINAL: ReadonlySet<JobStatus> = new Set(["completed", "completed_with_errors", "failed", "cancelled"]);

export type BackfillStatus = "pending" | "running" | "completed" | "failed";

/** One line the job could not take: its 1-based line number (inline records: index + 1). */
export interface LineError {
  line: number;
  code: string;
  message: string;
}

/** Most line errors a job keeps; past it `error_summary_truncated` is true. */
export const MAX_LINE_ERRORS = 1_000;

/**
 * Where REPLAYING stands, so a restart neither skips nor repeats a log: staging buckets
 * are replayed in order; every bucket below `done_below` is done, and none at or past
 * `claimed_to` was started. The patients of those in between are checked against their
 * stored history on resume. `processed`/`failed` count the buckets below `done_below` only.
 */
export interface ReplayCursor {
  done_below: number;
  claimed_to: number;
  processed: number;
  duplicates: number;
  failed: number;
  /** logs_failed when replay began (validation and staging failures). */
  failed_before: number;
}

/** An ingestion job as stored: the contract's job plus what the runner needs. */
export interface JobRecord {
  job_id: string;
  organization_id: string;
  project_id: string;
  status: JobStatus;
  stage: Stage;
  progress_pct: number;
  require_confirmation: boolean;
  rollback_on_cancel: boolean;
  idempotency_key: string | null;
  summary_types: string[] | null;
  patients_total: number;
  patients_processed: number;
  patients_created: number;
  /** Created patients removed again by a cancel with rollback_on_cancel. */
  patients_rolled_back: number;
  logs_total: number;
  logs_processed: number;
  logs_failed: number;
  /** Per-log idempotency keys already stored (counted in logs_processed too). */
  logs_duplicate: number;
  /** Logs skipped at validation for their own (payload) errors; part of logs_failed. */
  logs_invalid: number;
  logs_staged: number;
  lines_total: number;
  lines_validated: number;
  logs_by_event_type: Record<string, number>;
  error_summary: LineError[];
  error_summary_truncated: boolean;
  view_backfill_job_id: string | null;
  backfill_status: BackfillStatus | null;
  backfill_patients_done: number;
  /** Why the job failed or was cancelled. */
  status_message: string | null;
  estimated_seconds_remaining: number | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** Internal: the file (object store name), whether it came inline, and its size. */
  source: { object: string; inline: boolean; bytes: number };
  /** Internal: fraction (0..1) of the current stage done. */
  stage_fraction: number;
  replay: ReplayCursor | null;
  /** Internal: staging buckets of the job (see src/ingestion/staging.ts); replay goes bucket by bucket. */
  replay_buckets: number;
  /** Internal: how often each stage was entered; a re-run (after a restart) checks what the last run did. */
  stage_runs: Record<string, number>;
  /** Internal: when the job entered AWAITING_CONFIRMATION (its wait is not "running" time). */
  awaiting_since: string | null;
  awaited_ms: number;
}

export function newJobRecord(
  init: Pick<JobRecord, "job_id" | "organization_id" | "project_id" | "require_confirmation" | "rollback_on_cancel" | "idempotency_key" | "summary_types" | "source">,
  now: string,
): JobRecord {
  return {
    ...init,
    status: "queued",
    stage: "QUEUED",
    progress_pct: 0,
    patients_total: 0,
    patients_processed: 0,
    patients_created: 0,
    patients_rolled_back: 0,
    logs_total: 0,
    logs_processed: 0,
    logs_failed: 0,
    logs_duplicate: 0,
    logs_invalid: 0,
    logs_staged: 0,
    lines_total: 0,
    lines_validated: 0,
    logs_by_event_type: {},
    error_summary: [],
    error_summary_truncated: false,
    view_backfill_job_id: null,
    backfill_status: null,
    backfill_patients_done: 0,
    status_message: null,
    estimated_seconds_remaining: null,
    created_at: now,
    started_at: null,
    completed_at: null,
    stage_fraction: 0,
    replay: null,
    replay_buckets: 0,
    stage_runs: {},
    awaiting_since: null,
    awaited_ms: 0,
  };
}

/** Adds a line error, keeping at most MAX_LINE_ERRORS. */
export function addLineError(r: JobRecord, e: LineError): void {
  if (r.error_summary.length < MAX_LINE_ERRORS) r.error_summary.push(e);
  else r.error_summary_truncated = true;
}

/** Share of the whole job each stage stands for, in percent (measured on the bench: replay dominates). */
const STAGE_SPAN: Record<Stage, [number, number]> = {
  QUEUED: [0, 0],
  VALIDATING: [0, 15],
  INSERTING_PATIENTS: [15, 20],
  INSERTING_LOGS: [20, 35],
  AWAITING_CONFIRMATION: [35, 35],
  REPLAYING: [35, 85],
  BACKFILLING: [85, 100],
};

/** progress_pct and estimated_seconds_remaining from the stage and its fraction done. */
export function refreshProgress(r: JobRecord, nowMs: number): void {
  if (r.status === "completed" || r.status === "completed_with_errors") r.progress_pct = 100;
  else if (!TERMINAL.has(r.status)) {
    const [a, b] = STAGE_SPAN[r.stage];
    r.progress_pct = Math.round((a + (b - a) * Math.min(1, Math.max(0, r.stage_fraction))) * 10) / 10;
  }
  r.estimated_seconds_remaining = null;
  if (r.status !== "running" || r.started_at === null || r.progress_pct <= 0) return;
  const worked = nowMs - Date.parse(r.started_at) - r.awaited_ms;
  if (worked < 1_000) return;
  r.estimated_seconds_remaining = Math.max(0, Math.round((worked / 1000) * ((100 - r.progress_pct) / r.progress_pct)));
}

/** The contract's job shape (and a few explanatory extras); tenancy and runner state stay inside. */
export function publicJob(r: JobRecord) {
  return {
    job_id: r.job_id,
    status: r.status,
    stage: r.stage,
    progress_pct: r.progress_pct,
    require_confirmation: r.require_confirmation,
    rollback_on_cancel: r.rollback_on_cancel,
    idempotency_key: r.idempotency_key,
    summary_types: r.summary_types,
    patients_total: r.patients_total,
    patients_processed: r.patients_processed,
    patients_created: r.patients_created,
    patients_rolled_back: r.patients_rolled_back,
    logs_total: r.logs_total,
    logs_processed: r.logs_processed,
    logs_failed: r.logs_failed,
    logs_duplicate: r.logs_duplicate,
    logs_invalid: r.logs_invalid,
    logs_staged: r.logs_staged,
    lines_total: r.lines_total,
    lines_validated: r.lines_validated,
    logs_by_event_type: r.logs_by_event_type,
    error_summary: r.error_summary,
    error_summary_truncated: r.error_summary_truncated,
    view_backfill_job_id: r.view_backfill_job_id,
    backfill_status: r.backfill_status,
    status_message: r.status_message,
    estimated_seconds_remaining: r.estimated_seconds_remaining,
    created_at: r.created_at,
    started_at: r.started_at,
    completed_at: r.completed_at,
  };
}

export const JobSchema = Type.Object(
  {
    job_id: Type.String(),
    status: Type.String({ description: STATUSES.join(", ") }),
    stage: Type.String({ description: STAGES.join(", ") }),
    progress_pct: Type.Number(),
    require_confirmation: Type.Boolean(),
    rollback_on_cancel: Type.Boolean(),
    idempotency_key: Nullable(Type.String()),
    summary_types: Nullable(Type.Array(Type.String())),
    patients_total: Type.Integer(),
    patients_processed: Type.Integer(),
    patients_created: Type.Integer(),
    patients_rolled_back: Type.Integer({ description: "Created patients removed by a cancel with rollback_on_cancel" }),
    logs_total: Type.Integer(),
    logs_processed: Type.Integer({ description: "Logs stored in patient state, duplicates of already stored idempotency keys included" }),
    logs_failed: Type.Integer(),
    logs_duplicate: Type.Integer({ description: "Logs whose idempotency key was already stored (part of logs_processed)" }),
    logs_invalid: Type.Integer({ description: "Logs skipped at validation for payload errors (part of logs_failed)" }),
    logs_staged: Type.Integer(),
    lines_total: Type.Integer(),
    lines_validated: Type.Integer(),
    logs_by_event_type: Type.Record(Type.String(), Type.Integer()),
    error_summary: Type.Array(Type.Object({ line: Type.Integer(), code: Type.String(), message: Type.String() })),
    error_summary_truncated: Type.Boolean({ description: "More line errors than error_summary holds (1,000)" }),
    view_backfill_job_id: Nullable(Type.String()),
    backfill_status: Nullable(Type.String({ description: "pending, running, completed, failed" })),
    status_message: Nullable(Type.String()),
    estimated_seconds_remaining: Nullable(Type.Number()),
    created_at: Type.String(),
    started_at: Nullable(Type.String()),
    completed_at: Nullable(Type.String()),
  },
  { description: "An ingestion job" },
);
