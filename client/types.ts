/**
 * Wire shapes of the service (contract.md), as the client sends and receives them.
 * Resource fields keep the wire's snake_case; call options are camelCase.
 */

/** (system, value) is an identifier's identity; `integration_id` links it to an integration. */
export interface ExternalIdentifier {
  system: string;
  value: string;
  integration_id?: string;
}

/** Removes the identifiers equal to every field given: system and value, system alone (all of it), or integration_id. */
export interface IdentifierMatcher {
  system?: string;
  /** Needs `system`. */
  value?: string;
  integration_id?: string;
}

export interface PatientInput {
  first_name?: string;
  last_name?: string;
  email?: string;
  phone_number?: string;
  /** ISO 8601 date or datetime. */
  date_of_birth?: string;
  sex?: string;
  /** Free text, e.g. "breast". */
  primary_disease_site?: string;
  /** Free text, e.g. "IIIA". */
  disease_stage?: string;
  /** IANA zone name. @default "UTC" */
  timezone?: string;
  external_identifiers?: ExternalIdentifier[];
  metadata?: Record<string, unknown>;
}

/**
 * A partial update: only the fields sent change; null clears a field. `external_identifiers`
 * only adds (present pairs are skipped; at least one; removing is `removeIdentifiers`).
 */
export type PatientUpdate = { [K in Exclude<keyof PatientInput, "external_identifiers" | "timezone" | "metadata">]?: PatientInput[K] | null } & {
  timezone?: string;
  metadata?: Record<string, unknown>;
  external_identifiers?: ExternalIdentifier[];
};

export interface Patient {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone_number: string | null;
  date_of_birth: string | null;
  sex: string | null;
  primary_disease_site: string | null;
  disease_stage: string | null;
  timezone: string;
  status: string;
  external_identifiers: ExternalIdentifier[];
  metadata: Record<string, unknown>;
  created_at: string;
}

export interface PatientList {
  patients: Patient[];
  total: number;
  has_more: boolean;
}

export interface PatientBatchAnswer {
  count: number;
  items: { index: number; id: string }[];
  errors: { index: number; code: string; message: string }[];
}

/** Counts of what changed, the identifiers behind each, and the patient's identifiers after the change. */
export interface IdentifiersAnswer {
  patient_id: string;
  added: number;
  removed: number;
  /** Already present (add), or matchers that matched nothing (remove). */
  skipped: number;
  added_identifiers: ExternalIdentifier[];
  removed_identifiers: ExternalIdentifier[];
  skipped_identifiers: IdentifierMatcher[];
  external_identifiers: ExternalIdentifier[];
}

export type Trace = string | { object_type: string; object_id: string };

/** A log to submit. */
export interface LogInput {
  /** A catalog log type (GET /v1/log-types) or a legacy alias. */
  log_type: string;
  patient_id: string;
  /** ISO 8601 with an offset, e.g. 2026-03-01T10:00:00Z; left out (or null), the time the service accepts the log. */
  timestamp?: string | null;
  payload: Record<string, unknown>;
  /** Deduplicates within the project, forever. */
  idempotency_key?: string;
  /** The sender's own id of the log: without an idempotency key, a re-send of it the same or the next day is a duplicate. */
  log_id?: string;
  trace?: Trace;
  metadata?: Record<string, unknown>;
  /** Which client sent the log; kept in the log's metadata as `context`. */
  context?: Record<string, unknown>;
}

export interface BatchAnswer {
  accepted: number;
  failed: number;
  duplicates: number;
  errors: { index: number; code: string; message: string; details: Record<string, unknown>[] }[];
  results: { index: number; id: string | null; status: "accepted" | "duplicate" | "failed" }[];
}

/**
 * State reads carry `stale`: true when the service's wait for the caller's own earlier
 * writes ran out (it answered `x-pss-stale: true`), so the answer may not show them yet.
 * Non-enumerable, as it is not part of the wire body: JSON.stringify, spreads and toEqual
 * leave it out.
 */
export interface Freshness {
  readonly stale: boolean;
}

export interface LogTypeInfo {
  log_type: string;
  group: string;
  lifecycle_tracked: boolean;
  aliases: string[];
  schema: Record<string, unknown>;
  /** The hosted product's names for log_type, group and schema. */
  subtype: string;
  category: string;
  payload_schema: Record<string, unknown>;
  display_name: string;
  description: string;
  /** The payload's top-level fields, `[]` marking lists, "(required)" the required ones. */
  payload_description: string;
  sources: string[];
  version: number;
  /** The modules a log of the type updates: `stable:<key>` or `event_state:<key>`. */
  target_modules: string[];
  /** The patient is the source (reports, answers, conversations, app use). */
  user_facing: boolean;
}

export interface ModuleRead {
  module_type: string;
  payload: Record<string, unknown>;
  created_at: string | null;
  updated_at: string | null;
}

export interface StableAnswer {
  patient_id: string;
  modules: Record<string, ModuleRead>;
}

export interface EventModuleList {
  patient_id: string;
  modules: { module_type: string; created_at: string; updated_at: string }[];
}

export interface ViewList {
  patient_id: string;
  views: { view_type: string; view_id: string; has_blocks: boolean; has_temp: boolean }[];
}

export interface ViewBlock {
  id: string;
  name: string;
  text: string;
  segment: string;
  /** Ids of the logs the block was built from. */
  refs: string[];
  data: unknown;
  /** The template block it fills. */
  template_ref: { block_id: string };
  /** id, name and text again (`content`), as the hosted product's clients read them. */
  result: { id: string; name: string; content: string };
}

export interface View {
  patient_id: string;
  view_type: string;
  view_id: string;
  valid_from: string | null;
  valid_to: string | null;
  content: { blocks: ViewBlock[]; temp: ViewBlock[] };
}

export interface BlockList {
  patient_id: string;
  view_type: string;
  blocks: { block_id: string; block_name: string; segment: string; has_result: boolean }[];
}

export interface Block {
  patient_id: string;
  view_type: string;
  block_id: string;
  block_name: string;
  segment: string;
  content: string;
  data: unknown;
  refs: string[];
  updated_at: string | null;
}

/** One dated fact behind a view. */
export interface RecentItem {
  /** Event time, UTC. */
  timestamp: string;
  module_type: string;
  /** A log type or a finer label (dose, lab_value, conversation_summary, ...). */
  kind: string;
  summary: string;
  log_id: string;
}

export interface RecentEntries {
  patient_id: string;
  view_type: string;
  /** Each item as one line, its time in the patient's zone: "2026-11-21 09:00 — symptom_report: pain 7/10 (esas_r)". */
  entries: string[];
  /** The same entries as objects, in the same order. */
  items: RecentItem[];
  count: number;
  total_count: number;
}

export interface LogRow {
  id: string;
  type: string;
  timestamp: string;
  ingested_at: string;
  payload: Record<string, unknown>;
  /** A trace sent as a string reads as object_type null, object_id the string. */
  trace: { object_type: string | null; object_id: string } | null;
}

export interface LogPage {
  patient_id: string;
  count: number;
  logs: LogRow[];
  next_cursor: string | null;
}

export interface EventRow {
  id: string;
  trigger: string;
  log_type: string;
  status: string;
  triggered_at: string;
  completed_at: string;
  source_event_log_id: string;
  changes: { module_type: string; kind: string; op: string; fields?: string[] }[];
}

export interface EventPage {
  patient_id: string;
  count: number;
  events: EventRow[];
  next_cursor: string | null;
}

export interface Memory {
  /** Id of the log behind it: a memory_report, or the conversation it summarises. */
  memory_id: string;
  content: string;
  /** origin (memory_report | conversation), type, type_source (client | auto), conversation_id; source, trace, log_metadata when the log had them. */
  metadata: Record<string, unknown>;
  /** Event time of the log. */
  created_at: string;
  /** When the service accepted the log. */
  updated_at: string;
}

export interface MemoryList {
  patient_id: string;
  count: number;
  results: Memory[];
}

export interface Project {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  /** Free text, at most 2,000 characters. */
  description: string | null;
  /** Free intent tag (dev, staging, prod, ...), at most 64 characters. */
  environment: string | null;
  status: "active" | "deprecated";
  is_default: boolean;
  deprecated_at: string | null;
  created_at: string;
}

/** A new project's fields (create, duplicate): the slug comes from the name when absent. */
export interface ProjectInput {
  name: string;
  slug?: string;
  description?: string | null;
  environment?: string | null;
}

/** A partial project update: only the fields given change; null clears description or environment. */
export interface ProjectUpdate {
  name?: string;
  slug?: string;
  description?: string | null;
  environment?: string | null;
}

export interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  /** Null for an org-wide key. */
  project_id: string | null;
  created_at: string;
  revoked_at: string | null;
}

/** A created key: `key` is the secret, shown only in this answer. */
export interface CreatedApiKey extends Omit<ApiKey, "revoked_at"> {
  key: string;
}

export interface AccessToken {
  access_token: string;
  token_type: "bearer";
  /** Seconds until it expires. */
  expires_in: number;
}

export interface PatientToken extends AccessToken {
  scopes: string[];
}

export interface Organization {
  id: string;
  name: string;
  created_at: string;
  default_project_id: string;
  /** The organization's first org-wide key; shown only here. */
  api_key: string;
}

export interface AuditEntry {
  id: string;
  at: string;
  organization_id: string;
  project_id: string;
  key_id: string;
  credential: "api_key" | "jwt" | "patient_token";
  method: string;
  route: string;
  tool: string | null;
  patient_id: string | null;
  patient_ids: string[];
  status: number;
  request_id: string;
}

export interface DeadLetter {
  id: string;
  received_at: string;
  subject: string;
  reason: string;
  errors: { index: number; code: string; message: string; details: unknown[] }[];
  message: unknown;
}

/**
 * A job's status as the service shows it (the hosted product's values): the stage at
 * work, awaiting_confirmation, or how it ended. completed_with_errors: some logs were
 * skipped for their own errors (error_summary). A list filters on these or on "running"
 * (every job at work).
 */
export type JobStatus =
  | "queued"
  | "validating"
  | "inserting_patients"
  | "inserting_logs"
  | "awaiting_confirmation"
  | "replaying"
  | "backfilling"
  | "completed"
  | "completed_with_errors"
  | "failed"
  | "cancelled";

export interface IngestionJob {
  job_id: string;
  status: JobStatus | (string & {});
  stage: string;
  progress_pct: number;
  require_confirmation: boolean;
  rollback_on_cancel: boolean;
  idempotency_key: string | null;
  /** The view types the backfill renders: every view type unless some were chosen. */
  summary_types: string[];
  /** No view backfill after the replay (set by `patchJob` during the review). */
  skip_backfill: boolean;
  patients_total: number;
  patients_processed: number;
  patients_created: number;
  logs_total: number;
  /** Logs inserted: staged (at the review, how many went in), less those the replay could not store. */
  logs_processed: number;
  logs_failed: number;
  logs_by_event_type: Record<string, number>;
  /** Per patient id (at most 1,000 patients; patient_details_truncated says when there are more). */
  patient_log_counts: Record<string, number>;
  patient_event_type_counts: Record<string, Record<string, number>>;
  patient_replay_statuses: Record<string, "pending" | "completed" | "failed" | (string & {})>;
  patient_details_truncated: boolean;
  /** Always empty here: every view type renders from any patient's state. */
  missing_template_slots: Record<string, string[]>;
  error_summary: { line: number; code: string; message: string }[];
  view_backfill_job_id: string | null;
  /** pending, running, completed, failed or skipped. */
  backfill_status: string | null;
  backfill_progress_pct: number | null;
  estimated_seconds_remaining: number | null;
  /** The stage under way, counted in its unit (bytes, patients, logs); null between stages. */
  stage_work: { key: string; label: string; unit: string; done: number; total: number } | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** Beyond the contract, sent by this service: why a job failed or was cancelled, and finer counts. */
  status_message?: string | null;
  error_summary_truncated?: boolean;
  /** Logs the replay has written into patient state so far. */
  logs_replayed?: number;
  logs_duplicate?: number;
  logs_invalid?: number;
  /** Logs validated and staged, waiting for replay (confirmation). */
  logs_staged?: number;
  /** Patients and staged logs taken out of the job during its review. */
  patients_removed?: number;
  logs_removed?: number;
  patients_rolled_back?: number;
  /** Always 0 here (no model is called); sent for the hosted product's SDKs. */
  tokens_used?: number;
  cost_usd?: number;
}

/** A page of the project's jobs, newest first. */
export interface JobList {
  /** Jobs matching the filters. */
  total: number;
  jobs: IngestionJob[];
  page: number;
  page_size: number;
  has_more: boolean;
}

/** Filters and page of `listJobs`. */
export interface JobListOptions {
  /** A status, or "running" for every job at work. */
  status?: JobStatus | "running";
  idempotency_key?: string;
  /** 1-based. @default 1 */
  page?: number;
  /** Jobs per page. @default 20 */
  pageSize?: number;
  /** Another name of pageSize (before paging existed). */
  limit?: number;
}

/** What `patchJob` changes in a job awaiting confirmation. */
export interface JobChanges {
  /** View types to backfill (empty: all). */
  summary_types?: string[];
  /** Complete after the replay without a view backfill. */
  skip_backfill?: boolean;
}

export interface JobInput {
  /** From `uploadFile`; or give `records` inline. */
  s3_key?: string;
  /** Inline rows `{type: "patient"|"log", data}`, up to 50,000. */
  records?: { type: "patient" | "log"; data: Record<string, unknown> }[];
  idempotency_key?: string;
  /** Pause in AWAITING_CONFIRMATION after inserting. @default true */
  require_confirmation?: boolean;
  /** On cancel, also remove the patients the job created. @default false */
  rollback_on_cancel?: boolean;
  /** View types to backfill. */
  summary_types?: string[];
  /** Accepted for the hosted product's SDKs and ignored: views here fold every log. */
  max_event_logs?: number;
}
