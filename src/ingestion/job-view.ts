import { Type } from "@sinclair/typebox";
import { Nullable } from "../../catalog/schemas/common.js";
import { VIEW_TYPES } from "../../readmodels/views/index.js";
import { STAGES, type JobRecord, type Stage } from "./job-record.js";

/**
 * The job's `status` as answers show it: the hosted product's values (its SDKs parse the
 * field as an enum), finer than the stored status, whose "running" becomes the stage at
 * work. "confirmed" is never shown (a confirmed job starts its replay at once), nor are
 * the product's extracting, loading, rebasing and embedding (no such stages here).
 * completed_with_errors here means logs were skipped for their own errors (error_summary).
 */
export const WIRE_STATUSES = [
  "queued", "validating", "inserting_patients", "inserting_logs", "awaiting_confirmation",
  "replaying", "backfilling", "completed", "completed_with_errors", "failed", "cancelled",
] as const;
export type WireStatus = (typeof WIRE_STATUSES)[number];

/** What `?status=` takes: any value of the SDK's enum, or "running" for every job at work. */
export const STATUS_FILTERS = [...WIRE_STATUSES, "running", "confirmed", "extracting", "loading", "rebasing", "embedding"] as const;
export type StatusFilter = (typeof STATUS_FILTERS)[number];

const BY_STAGE: Record<Stage, WireStatus> = {
  QUEUED: "queued",
  VALIDATING: "validating",
  INSERTING_PATIENTS: "inserting_patients",
  INSERTING_LOGS: "inserting_logs",
  // Stored as running with this stage only while a cancel from the review cleans up.
  AWAITING_CONFIRMATION: "awaiting_confirmation",
  REPLAYING: "replaying",
  BACKFILLING: "backfilling",
};

/**
 * The shown status; a record of any build (one saying "running") maps through its stage.
 * A finished job whose view backfill runs again (retry-backfill) shows "backfilling" until
 * it ends, as the hosted product's SDK expects when it polls after the retry.
 */
export function wireStatus(r: Pick<JobRecord, "status" | "stage"> & Partial<Pick<JobRecord, "backfill_status">>): WireStatus {
  if (r.status === "running") return BY_STAGE[r.stage] ?? "validating";
  if ((r.status === "completed" || r.status === "completed_with_errors") && r.backfill_status === "running") return "backfilling";
  return r.status;
}

/**
 * The shown stage: CANCELLING while a cancel cleans up (the status stays one the hosted
 * product's SDK parses; its `stage` is free text), else the stored one.
 */
export function shownStage(r: Pick<JobRecord, "stage"> & Partial<Pick<JobRecord, "cancelling">>): string {
  return r.cancelling === true ? "CANCELLING" : r.stage;
}

export function matchesStatus(r: Pick<JobRecord, "status" | "stage"> & Partial<Pick<JobRecord, "backfill_status">>, filter: StatusFilter): boolean {
  const shown = wireStatus(r);
  return filter === "running" ? r.status === "running" || shown === "backfilling" : shown === filter;
}

/** The work of the stage under way, counted in its own unit; null between stages. */
function stageWork(r: JobRecord): { key: string; label: string; unit: string; done: number; total: number } | null {
  const at = (key: Stage, label: string, unit: string, done: number, total: number) => ({ key: key.toLowerCase(), label, unit, done: Math.max(0, Math.round(done)), total: Math.max(0, total) });
  if (r.status !== "running") return null;
  if (r.cancelling) {
    if (!r.rollback_on_cancel) return null;
    const done = r.patients_rolled_back + r.patients_rollback_kept;
    return { key: "cancelling", label: "Created patients rolled back (or kept for data not from this job)", unit: "patients", done, total: Math.max(done, r.patients_created) };
  }
  switch (r.stage) {
    case "VALIDATING":
      return at(r.stage, "File read and checked", "bytes", r.stage_fraction * r.source.bytes, r.source.bytes);
    case "INSERTING_PATIENTS":
      return at(r.stage, "Patient rows placed", "patients", r.patients_processed, r.patients_total);
    case "INSERTING_LOGS":
      return at(r.stage, "Logs staged", "logs", r.logs_staged, r.logs_total - r.logs_invalid);
    case "REPLAYING":
      return at(r.stage, "Staged logs replayed into patient state", "logs", r.stage_fraction * r.logs_staged, r.logs_staged);
    case "BACKFILLING":
      return at(r.stage, "Patients whose views are backfilled", "patients", r.backfill_patients_done, r.backfill_patients_total);
    default:
      return null;
  }
}

function backfillProgressPct(r: JobRecord): number | null {
  if (r.backfill_status === null || r.backfill_status === "skipped") return null;
  if (r.backfill_status === "completed") return 100;
  return r.backfill_patients_total > 0 ? Math.round((1000 * r.backfill_patients_done) / r.backfill_patients_total) / 10 : 0;
}

/**
 * The job as answered: the contract's fields, the hosted product's (its SDKs read them:
 * never null where they expect a list, a map or a number), and a few explanatory extras;
 * tenancy and runner state stay inside.
 */
export function publicJob(r: JobRecord) {
  return {
    job_id: r.job_id,
    status: wireStatus(r),
    stage: shownStage(r),
    progress_pct: r.progress_pct,
    require_confirmation: r.require_confirmation,
    rollback_on_cancel: r.rollback_on_cancel,
    idempotency_key: r.idempotency_key,
    summary_types: r.summary_types && r.summary_types.length > 0 ? r.summary_types : [...VIEW_TYPES],
    skip_backfill: r.skip_backfill,
    patients_total: r.patients_total,
    patients_processed: r.patients_processed,
    patients_created: r.patients_created,
    patients_rolled_back: r.patients_rolled_back,
    patients_rollback_kept: r.patients_rollback_kept,
    rollback_kept: r.rollback_kept,
    patients_removed: r.patients_removed,
    logs_total: r.logs_total,
    logs_processed: r.logs_processed,
    logs_failed: r.logs_failed,
    logs_replayed: r.logs_replayed,
    logs_duplicate: r.logs_duplicate,
    logs_invalid: r.logs_invalid,
    logs_staged: r.logs_staged,
    logs_removed: r.logs_removed,
    lines_total: r.lines_total,
    lines_validated: r.lines_validated,
    logs_by_event_type: r.logs_by_event_type,
    patient_log_counts: r.patient_log_counts,
    patient_event_type_counts: r.patient_event_type_counts,
    patient_replay_statuses: r.patient_replay_statuses,
    patient_details_truncated: r.patient_details_truncated,
    // Every view type is rendered from any patient's state: no patient lacks a view slot.
    missing_template_slots: {},
    error_summary: r.error_summary,
    error_summary_truncated: r.error_summary_truncated,
    view_backfill_job_id: r.view_backfill_job_id,
    backfill_status: r.backfill_status,
    backfill_progress_pct: backfillProgressPct(r),
    // No model is called: a job here spends no tokens and costs nothing extra.
    tokens_used: 0,
    cost_usd: 0,
    status_message: r.status_message,
    estimated_seconds_remaining: r.estimated_seconds_remaining,
    stage_work: stageWork(r),
    created_at: r.created_at,
    started_at: r.started_at,
    completed_at: r.completed_at,
  };
}

const Counts = Type.Record(Type.String(), Type.Integer());

export const JobSchema = Type.Object(
  {
    job_id: Type.String(),
    status: Type.Union(WIRE_STATUSES.map((s) => Type.Literal(s)), { description: "queued, validating, inserting_patients, inserting_logs, awaiting_confirmation, replaying, backfilling, then completed, completed_with_errors (logs skipped for their own errors), failed or cancelled" }),
    stage: Type.String({ description: `${STAGES.join(", ")}; CANCELLING while a cancel cleans up (status then stays where the cancel came)` }),
    progress_pct: Type.Number(),
    require_confirmation: Type.Boolean(),
    rollback_on_cancel: Type.Boolean(),
    idempotency_key: Nullable(Type.String()),
    summary_types: Type.Array(Type.String(), { description: "The view types the backfill renders (every view type unless some were chosen)" }),
    skip_backfill: Type.Boolean({ description: "No view backfill after the replay (PATCH while awaiting confirmation); retry-backfill still runs one" }),
    patients_total: Type.Integer(),
    patients_processed: Type.Integer(),
    patients_created: Type.Integer(),
    patients_rolled_back: Type.Integer({ description: "Created patients removed by a cancel with rollback_on_cancel" }),
    patients_rollback_kept: Type.Integer({ description: "Created patients a rollback kept because they received data not from this job" }),
    rollback_kept: Type.Array(
      Type.Object({ patient_id: Type.String(), reason: Type.Union([Type.Literal("live_logs"), Type.Literal("updated")]) }),
      { description: "Which created patients a rollback kept, and why: live_logs (logs not from this job reached it) or updated (its record changed since the job created it); at most 1,000" },
    ),
    patients_removed: Type.Integer({ description: "Patients taken out of the job while it awaited confirmation" }),
    logs_total: Type.Integer(),
    logs_processed: Type.Integer({ description: "Logs inserted: staged (at the review, how many went in), less those the replay could not store; after a cancel or failure, those that stayed in patient state" }),
    logs_failed: Type.Integer(),
    logs_replayed: Type.Integer({ description: "Logs the replay wrote into patient state so far, duplicates of already stored idempotency keys included" }),
    logs_duplicate: Type.Integer({ description: "Logs whose idempotency key was already stored (part of logs_replayed)" }),
    logs_invalid: Type.Integer({ description: "Logs skipped at validation for payload errors (part of logs_failed)" }),
    logs_staged: Type.Integer(),
    logs_removed: Type.Integer({ description: "Staged logs dropped with patients taken out of the job (no longer counted in logs_total)" }),
    lines_total: Type.Integer(),
    lines_validated: Type.Integer(),
    logs_by_event_type: Counts,
    patient_log_counts: Type.Record(Type.String(), Type.Integer(), { description: "Staged logs per patient id (at most 1,000 patients)" }),
    patient_event_type_counts: Type.Record(Type.String(), Counts, { description: "Staged logs per patient id and log type (at most 1,000 patients)" }),
    patient_replay_statuses: Type.Record(Type.String(), Type.String(), { description: "pending, completed or failed, per patient id (at most 1,000 patients)" }),
    patient_details_truncated: Type.Boolean({ description: "The job has more patients than the per-patient maps show" }),
    missing_template_slots: Type.Record(Type.String(), Type.Array(Type.String()), { description: "Always empty: every view type renders from any patient's state" }),
    error_summary: Type.Array(Type.Object({ line: Type.Integer(), code: Type.String(), message: Type.String() })),
    error_summary_truncated: Type.Boolean({ description: "More line errors than error_summary holds (1,000)" }),
    view_backfill_job_id: Nullable(Type.String()),
    backfill_status: Nullable(Type.String({ description: "pending, running, completed, failed, skipped" })),
    backfill_progress_pct: Nullable(Type.Number()),
    tokens_used: Type.Integer({ description: "Always 0: no model is called" }),
    cost_usd: Type.Number({ description: "Always 0: no model is called" }),
    status_message: Nullable(Type.String()),
    estimated_seconds_remaining: Nullable(Type.Integer()),
    stage_work: Nullable(
      Type.Object({ key: Type.String(), label: Type.String(), unit: Type.String(), done: Type.Integer(), total: Type.Integer() }, { description: "The stage under way, counted in its unit" }),
    ),
    created_at: Type.String(),
    started_at: Nullable(Type.String()),
    completed_at: Nullable(Type.String()),
  },
  { description: "An ingestion job" },
);
