import type { LogType } from "../catalog/log-types.js";

/** A log's trace: a free string, or a typed link to a client object. */
export type Trace = string | { object_type: string; object_id: string };

/** A trace as one string, as filters and the ClickHouse `trace` column compare it: `type:id` for an object. */
export function traceText(t: Trace | undefined): string | undefined {
  return t === undefined ? undefined : typeof t === "string" ? t : `${t.object_type}:${t.object_id}`;
}

/**
 * A trace as its two parts, the form clients that only know object traces read: an object
 * as it is; a string as an id of no stated type (`object_type` null), never split at a
 * ":", so what a client sent comes back whole (as the log query answers it too).
 */
export function traceParts(t: Trace): { object_type: string | null; object_id: string } {
  return typeof t === "string" ? { object_type: null, object_id: t } : { object_type: t.object_type, object_id: t.object_id };
}

/**
 * A log as stored in JetStream and folded by the reducers. Everything a reducer needs
 * (time, ids) is here, so reducers never read the clock or a server.
 */
export interface LogRecord {
  /** Service-assigned id, unique and time-sortable (`log_` + ULID). */
  id: string;
  /** Canonical catalog type (aliases are resolved before storage). */
  log_type: LogType;
  organization_id: string;
  project_id: string;
  patient_id: string;
  /** Event time, ISO 8601 UTC: the order in which logs are applied. */
  timestamp: string;
  /** When the service accepted the log, ISO 8601 UTC. */
  ingested_at: string;
  payload: Record<string, unknown>;
  idempotency_key?: string;
  trace?: Trace;
  metadata?: Record<string, unknown>;
}
