export const STAGES = ["QUEUED", "VALIDATING", "INSERTING_PATIENTS", "INSERTING_LOGS", "AWAITING_CONFIRMATION", "REPLAYING", "BACKFILLING"] as const;
export type Stage = (typeof STAGES)[number];

/**
 * Statuses as stored: "running" covers every working stage (and a clean-up after a cancel
 * or a failure). Answers show a finer status, one of the hosted product's (job-view.ts).
 */
export const STATUSES = ["queued", "running", "awaiting_confirmation", "completed", "completed_with_errors", "failed", "cancelled"] as const;
export type JobStatus = (typeof STATUSES)[number];

export const TERMINAL: ReadonlySet<JobStatus> = new Set(["completed", "completed_with_errors", "failed", "cancelled"]);

/** "skipped": the job was told (PATCH skip_backfill) not to backfill views after its replay. */
export type BackfillStatus = "pending" | "running" | "completed" | "failed" | "skipped";

/** How one patient's replay went: pending until its logs are written, failed when one of them could not be. */
export type PatientReplayStatus = "pending" | "completed" | "failed";

/** What a job's file holds: JSONL rows, or FHIR resources and Bundles, one a line (src/ingestion/fhir-rows.ts). */
export const JOB_FORMATS = ["jsonl", "fhir"] as const;
export type JobFormat = (typeof JOB_FORMATS)[number];

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
  /** View types to backfill; null or empty: every view type. */
  summary_types: string[] | null;
  /** No view backfill after the replay (PATCH while awaiting confirmation); retry-backfill still runs one. */
  skip_backfill: boolean;
  patients_total: number;
  patients_processed: number;
  patients_created: number;
  /** Created patients removed again by a cancel with rollback_on_cancel. */
  patients_rolled_back: number;
  /** Created patients a rollback kept: they held data not from this job (see actors/ingestion/rollback.ts). */
  patients_rollback_kept: number;
  /** Which, and why (at most MAX_PATIENT_DETAILS). */
  rollback_kept: RollbackKept[];
  /** Patients taken out of the job under review (DELETE .../patients/{pid}); their ids are in `removed_patients`. */
  patients_removed: number;
  logs_total: number;
  /**
   * Logs inserted: staged by INSERTING_LOGS (so the review shows how many went in), less
   * those REPLAYING could not store; after a cancel or a failure, the logs that stayed in
   * patient state (logs_replayed).
   */
  logs_processed: number;
  logs_failed: number;
  /** Logs REPLAYING has written into patient state so far, duplicates of stored idempotency keys included. */
  logs_replayed: number;
  /** Staged logs dropped with the patients taken out of the job (no longer in logs_total). */
  logs_removed: number;
  /** Per-log idempotency keys already stored (counted in logs_processed too). */
  logs_duplicate: number;
  /** Logs skipped at validation for their own (payload) errors; part of logs_failed. */
  logs_invalid: number;
  logs_staged: number;
  lines_total: number;
  lines_validated: number;
  logs_by_event_type: Record<string, number>;
  /** Staged logs per patient, by type, and how each patient's replay went (src/ingestion/patient-details.ts). */
  patient_log_counts: Record<string, number>;
  patient_event_type_counts: Record<string, Record<string, number>>;
  patient_replay_statuses: Record<string, PatientReplayStatus>;
  /** Internal: log lines per patient skipped at validation for their payload, and FHIR resources skipped at conversion (the preview shows them). */
  patient_invalid_counts: Record<string, number>;
  /** More patients than the per-patient maps describe (MAX_PATIENT_DETAILS). */
  patient_details_truncated: boolean;
  /** Internal: patients taken out of the job under review; replay and backfill pass them by. */
  removed_patients: string[];
  error_summary: LineError[];
  error_summary_truncated: boolean;
  view_backfill_job_id: string | null;
  backfill_status: BackfillStatus | null;
  backfill_patients_done: number;
  /** Patients the (last) view backfill goes through. */
  backfill_patients_total: number;
  /** Why the job failed or was cancelled; while a cancel cleans up, what it is doing. */
  status_message: string | null;
  /**
   * A cancel is cleaning up (dropping staged logs, rolling back created patients); `stage`
   * stays where the cancel came, and answers show stage CANCELLING.
   */
  cancelling: boolean;
  estimated_seconds_remaining: number | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /**
   * Internal: the file (object store name), whether it came inline, and its size; its
   * format (given at creation, else sniffed by VALIDATING; absent: JSONL rows), and for a
   * FHIR file the JSONL rows VALIDATING converted it to, which the later stages read.
   */
  source: { object: string; inline: boolean; bytes: number; format?: JobFormat; rows?: { object: string; bytes: number } };
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

/**
 * A created patient a rollback kept. live_logs: logs not from this job reached it (live
 * writes: the job had written none yet); updated: its record changed since the job created it.
 */
export interface RollbackKept {
  patient_id: string;
  reason: "live_logs" | "updated";
}

export function newJobRecord(
  init: Pick<JobRecord, "job_id" | "organization_id" | "project_id" | "require_confirmation" | "rollback_on_cancel" | "idempotency_key" | "summary_types" | "source">,
  now: string,
): JobRecord {
  return {
    ...LATER_FIELDS(),
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

/** Fields records saved by earlier builds lack, with the value such a record stands for. */
const LATER_FIELDS = () => ({
  skip_backfill: false,
  patients_removed: 0,
  logs_replayed: 0,
  logs_removed: 0,
  patient_log_counts: {},
  patient_event_type_counts: {},
  patient_replay_statuses: {},
  patient_details_truncated: false,
  removed_patients: [],
  backfill_patients_total: 0,
  patients_rollback_kept: 0,
  rollback_kept: [],
  patient_invalid_counts: {},
  cancelling: false,
});

/** A stored record as this build reads it: the fields an earlier build did not write take their defaults. */
export function upgradeRecord(r: JobRecord): JobRecord {
  const missing = Object.entries(LATER_FIELDS()).filter(([k]) => (r as unknown as Record<string, unknown>)[k] === undefined);
  if (missing.length === 0) return r;
  if (r.logs_replayed === undefined) {
    // logs_processed used to count the logs replayed; at the review it now counts those staged.
    missing.push(["logs_replayed", r.logs_processed]);
    if (r.status === "awaiting_confirmation") r.logs_processed = r.logs_staged;
  }
  return Object.assign(r, Object.fromEntries(missing));
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
