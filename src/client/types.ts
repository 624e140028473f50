/**
 * Wire shapes of the service (contract.md), as the client sends and receives them.
 * Resource fields keep the wire's snake_case; call options are camelCase.
 */

export interface ExternalIdentifier {
  system: string;
  value: string;
}

export interface PatientInput {
  first_name?: string;
  last_name?: string;
  email?: string;
  phone_number?: string;
  /** ISO 8601 date or datetime. */
  date_of_birth?: string;
  sex?: string;
  /** IANA zone name. @default "UTC" */
  timezone?: string;
  external_identifiers?: ExternalIdentifier[];
  metadata?: Record<string, unknown>;
}

/** A partial update: only the fields sent change; null clears a field. */
export type PatientUpdate = { [K in Exclude<keyof PatientInput, "external_identifiers" | "timezone" | "metadata">]?: PatientInput[K] | null } & {
  timezone?: string;
  metadata?: Record<string, unknown>;
};

export interface Patient {
  id: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
  phone_number: string | null;
  date_of_birth: string | null;
  sex: string | null;
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

export interface IdentifiersAnswer {
  patient_id: string;
  added: ExternalIdentifier[];
  removed: ExternalIdentifier[];
  skipped: ExternalIdentifier[];
  external_identifiers: ExternalIdentifier[];
}

export type Trace = string | { object_type: string; object_id: string };

/** A log to submit. */
export interface LogInput {
  /** A catalog log type (GET /v1/log-types) or a legacy alias. */
  log_type: string;
  patient_id: string;
  /** ISO 8601 with an offset, e.g. 2026-03-01T10:00:00Z. */
  timestamp: string;
  payload: Record<string, unknown>;
  /** Deduplicates within the project, forever. */
  idempotency_key?: string;
  trace?: Trace;
  metadata?: Record<string, unknown>;
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

export interface RecentEntries {
  patient_id: string;
  view_type: string;
  entries: unknown[];
  count: number;
  total_count: number;
}

export interface LogRow {
  id: string;
  type: string;
  timestamp: string;
  ingested_at: string;
  payload: Record<string, unknown>;
  trace: Trace | null;
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

export interface Project {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  status: "active" | "deprecated";
  is_default: boolean;
  deprecated_at: string | null;
  created_at: string;
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

export type JobStatus = "queued" | "running" | "awaiting_confirmation" | "completed" | "completed_with_errors" | "failed" | "cancelled";

export interface IngestionJob {
  job_id: string;
  status: JobStatus | (string & {});
  stage: string;
  progress_pct: number;
  require_confirmation: boolean;
  rollback_on_cancel: boolean;
  idempotency_key: string | null;
  summary_types: string[] | null;
  patients_total: number;
  patients_processed: number;
  patients_created: number;
  logs_total: number;
  logs_processed: number;
  logs_failed: number;
  logs_by_event_type: Record<string, number>;
  error_summary: { line: number; code: string; message: string }[];
  view_backfill_job_id: string | null;
  backfill_status: string | null;
  estimated_seconds_remaining: number | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** Beyond the contract, sent by this service: why a job failed or was cancelled, and finer counts. */
  status_message?: string | null;
  error_summary_truncated?: boolean;
  logs_duplicate?: number;
  logs_invalid?: number;
  /** Logs validated and staged, waiting for replay (confirmation). */
  logs_staged?: number;
  patients_rolled_back?: number;
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
}
