import type { LogType } from "../catalog/log-types.js";
import type { LogPayloads } from "../catalog/payloads.js";

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

/** What every log carries besides its type and payload. */
export interface LogEnvelope {
  /** Service-assigned id, unique and time-sortable (`log_` + ULID). */
  id: string;
  organization_id: string;
  project_id: string;
  patient_id: string;
  /** Event time, ISO 8601 UTC: the order in which logs are applied. */
  timestamp: string;
  /** When the service accepted the log, ISO 8601 UTC. */
  ingested_at: string;
  idempotency_key?: string;
  trace?: Trace;
  metadata?: Record<string, unknown>;
}

/**
 * A log as stored in JetStream and folded by the reducers. Everything a reducer needs
 * (time, ids) is here, so reducers never read the clock or a server.
 */
export interface LogRecord extends LogEnvelope {
  /** Canonical catalog type (aliases are resolved before storage). */
  log_type: LogType;
  payload: Record<string, unknown>;
}

/** A log of type `T`, its payload typed by the catalog's schema for `T`. */
export interface LogOf<T extends LogType> extends LogEnvelope {
  readonly log_type: T;
  readonly payload: LogPayloads[T];
}

/** A log of one of the types `T`, discriminated on `log_type`: a switch on it narrows the payload. */
export type TypedLog<T extends LogType = LogType> = { [K in T]: LogOf<K> }[T];

/**
 * A stored log read with its catalog type. Its payload passed the catalog when it was
 * accepted, but perhaps an older catalog, so the type is what the log should hold, not a
 * promise: reducers read its fields through the guards of lib/payload.ts, which take
 * anything else as absent. No check is made here: the fold runs for every log.
 */
export function typedLog(log: LogRecord): TypedLog {
  return log as TypedLog;
}
