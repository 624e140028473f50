/** The Patient State Service client library (package export "./client"). */
export { PatientStateClient, type ClientOptions, type LogsApi } from "./client.js";
export * from "./errors.js";
export { FhirApi, type FhirBundle, type FhirBundleAnswer, type FhirBundleOptions, type FhirResource, type LogFhirOptions } from "./fhir.js";
export { LogQuery, QueryResult, f, type AggOp, type Condition, type FilterNode, type FilterOp, type LogEntry, type QueryAnswer, type QueryBody, type SelectItem, type ArraySelectItem, type TypedLogEntry } from "./query.js";
export { BufferedLogger, type LoggerFailure, type LoggerOptions, type LoggerStats } from "./logger.js";
export { Paged, type AtOptions, type DiffOptions, type FhirSearchOptions, type FhirSearchType, type LogReadOptions } from "./state.js";
export { FINAL_JOB_STATUSES, type UploadOptions, type UploadProgress } from "./ingestion.js";
export type * from "./types.js";
