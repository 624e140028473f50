/**
 * Names for the wire shapes of the service, as the client sends and receives them. Each is
 * taken from client/wire.ts, which is generated from the routes' schemas (`npm run
 * gen:client-types`), so none is declared twice. Resource fields keep the wire's
 * snake_case; only call options (camelCase) and `Freshness`, which no body carries, are
 * written by hand.
 */
import type { components, paths } from "./wire.js";

type Json<T> = T extends { content: { "application/json": infer J } } ? J : never;
/** The JSON body a route answers with (status 200 unless given). */
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends { responses: infer R } ? (S extends keyof R ? Json<R[S]> : never) : never;
/** The JSON body a route takes. */
type Body<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: infer B } ? Json<NonNullable<B>> : never;
type Item<T> = T extends readonly (infer I)[] ? I : never;

export type Patient = components["schemas"]["Patient"];
export type PatientInput = Body<"/v1/patients", "post">;
/**
 * A partial update: only the fields sent change; null clears a field. `external_identifiers`
 * only adds (present pairs are skipped; at least one; removing is `removeIdentifiers`).
 */
export type PatientUpdate = Body<"/v1/patients/{id}", "put">;
/** (system, value) is an identifier's identity; `integration_id` links it to an integration. */
export type ExternalIdentifier = Item<Patient["external_identifiers"]>;
/** Removes the identifiers equal to every field given: system and value, system alone (all of it), or integration_id. */
export type IdentifierMatcher = Item<Body<"/v1/patients/{id}/external-identifiers", "delete">["identifiers"]>;
export type PatientList = Answer<"/v1/patients", "get">;
export type PatientBatchAnswer = Answer<"/v1/patients/batch", "post">;
/** Counts of what changed, the identifiers behind each, and the patient's identifiers after the change. */
export type IdentifiersAnswer = Answer<"/v1/patients/{id}/external-identifiers", "post">;
export type PatientDeleted = Answer<"/v1/patients/{id}", "delete">;

/** A log to submit. */
export type LogInput = components["schemas"]["LogInput"];
export type Trace = NonNullable<LogInput["trace"]>;
export type BatchAnswer = Answer<"/v1/logs/batch", "post">;

export type LogTypeInfo = Answer<"/v1/log-types/{log_type}", "get">;
export type LogTypeList = Answer<"/v1/log-types", "get">;

export type StableAnswer = Answer<"/v1/state/{pid}/stable", "get">;
export type ModuleRead = StableAnswer["modules"][string];
export type EventModuleList = Answer<"/v1/state/{pid}/event-modules", "get">;
export type EventModule = Answer<"/v1/state/{pid}/event-modules/{module_type}", "get">;
export type ViewList = Answer<"/v1/state/{pid}/views", "get">;
export type View = Answer<"/v1/state/{pid}/views/{view_type}", "get">;
export type ViewBlock = Item<View["content"]["blocks"]>;
export type BlockList = Answer<"/v1/state/{pid}/views/{view_type}/blocks", "get">;
export type Block = Answer<"/v1/state/{pid}/views/{view_type}/blocks/{block_id}", "get">;
export type RecentEntries = Answer<"/v1/state/{pid}/views/{view_type}/recent", "get">;
/** What changed between two states of a patient: modules, and per module the top-level payload fields. */
export type StateDiff = Answer<"/v1/state/{pid}/diff", "get">;
export type StateChanges = Answer<"/v1/state/{pid}/changes", "get">;
/**
 * A FHIR R4 Bundle (application/fhir+json): the patient summary document or a searchset.
 * Its resources are FHIR's own shapes: type them with @medplum/fhirtypes if you use it.
 */
export type FhirBundle = components["schemas"]["FhirBundle"];
export type ModuleDiff = Item<StateDiff["modules"]>;
/** One dated fact behind a view. */
export type RecentItem = Item<RecentEntries["items"]>;
export type LogPage = Answer<"/v1/state/{pid}/logs", "get">;
export type LogRow = Item<LogPage["logs"]>;
export type EventPage = Answer<"/v1/state/{pid}/events", "get">;
export type EventRow = Item<EventPage["events"]>;
export type MemoryList = Answer<"/v1/state/{pid}/memories", "get">;
export type Memory = Item<MemoryList["results"]>;

/**
 * State reads carry `stale`: true when the service's wait for the caller's own earlier
 * writes ran out (it answered `x-pss-stale: true`), so the answer may not show them yet.
 * Non-enumerable, as it is not part of the wire body: JSON.stringify, spreads and toEqual
 * leave it out.
 */
export interface Freshness {
  readonly stale: boolean;
}

export type Project = Answer<"/v1/projects/{id}", "get">;
export type ProjectList = Answer<"/v1/projects", "get">;
/** A new project's fields (create, duplicate): the slug comes from the name when absent. */
export type ProjectInput = Body<"/v1/projects", "post">;
/** A partial project update: only the fields given change; null clears description or environment. */
export type ProjectUpdate = Body<"/v1/projects/{id}", "patch">;

export type ApiKey = Answer<"/v1/api-keys/{id}", "delete">;
export type ApiKeyList = Answer<"/v1/api-keys", "get">;
export type ApiKeyInput = Body<"/v1/api-keys", "post">;
/** A created key: `key` is the secret, shown only in this answer. */
export type CreatedApiKey = Answer<"/v1/api-keys", "post", 201>;
export type AccessToken = Answer<"/auth/token", "post">;
export type PatientToken = Answer<"/v1/auth/token", "post">;
export type Organization = Answer<"/v1/organizations", "post", 201>;
export type AuditPage = Answer<"/v1/audit", "get">;
export type AuditEntry = Item<AuditPage["entries"]>;
export type DeadLetterPage = Answer<"/v1/dead-letters", "get">;
export type DeadLetter = Item<DeadLetterPage["dead_letters"]>;
export type Health = Answer<"/healthz", "get">;
export type UploadUrl = Answer<"/v1/ingestion/upload-url", "post">;

export type IngestionJob = Answer<"/v1/ingestion/jobs/{id}", "get">;
/** A page of the project's jobs, newest first. */
export type JobList = Answer<"/v1/ingestion/jobs", "get">;
/** A row of a job's inline `records`. */
export type IngestionRecord = components["schemas"]["IngestionRecord"];
export type JobInput = Omit<Body<"/v1/ingestion/jobs", "post">, "records"> & {
  /**
   * Inline rows, up to 50,000; line n of the job is records[n-1]. Or FHIR R4 resources and
   * Bundles (with `format: "fhir"`). Or give `s3_key` from `uploadFile`.
   */
  records?: IngestionRecord[] | { resourceType: string; [element: string]: unknown }[];
};
/** What confirming a job awaiting confirmation would change, for a sample of its patients. */
export type JobPreview = Answer<"/v1/ingestion/jobs/{id}/preview", "get">;
/** Cancel's choice: `rollback` true removes the patients the job created, false keeps them; absent, the job's rollback_on_cancel decides. */
export type JobCancel = components["schemas"]["IngestionCancel"];
/** What `patchJob` changes in a job awaiting confirmation. */
export type JobChanges = Body<"/v1/ingestion/jobs/{id}", "patch">;
/**
 * A job's status as the service shows it (the hosted product's values): the stage at
 * work, awaiting_confirmation, or how it ended. completed_with_errors: some logs were
 * skipped for their own errors (error_summary). A list filters on these or on "running"
 * (every job at work).
 */
export type JobStatus = IngestionJob["status"];

/** Filters and page of `listJobs`. */
export interface JobListOptions {
  /** A status, or "running" for every job at work. */
  status?: NonNullable<paths["/v1/ingestion/jobs"]["get"]["parameters"]["query"]>["status"];
  idempotency_key?: string;
  /** 1-based. @default 1 */
  page?: number;
  /** Jobs per page. @default 20 */
  pageSize?: number;
  /** Another name of pageSize (before paging existed). */
  limit?: number;
}

/** POST /v1/state/logs/query's body as the route's schema states it (the client's `QueryBody` types its filter groups further). */
export type LogQueryBody = Body<"/v1/state/logs/query", "post">;
/** What a log query answers: rows (full logs, selected fields or groups) or a count. */
export type LogQueryAnswer = Answer<"/v1/state/logs/query", "post">;

/** GET /v1/auth/me: what the calling credential is and may do. */
export type CredentialInfo = Answer<"/v1/auth/me", "get">;
