import { resolveLogType, validatePayload } from "../catalog/index.js";
import type { LogType } from "../catalog/log-types.js";
import { echoField, fieldIssue, type ErrorDetail } from "../errors.js";
import { nestedDeeperThan } from "../json-depth.js";
import type { Trace } from "../../readmodels/log-record.js";
import { canonicalTimestamp } from "../../readmodels/lib/time.js";

/** A submitted log that passed envelope and payload validation (patient not yet checked). */
export interface ValidLogInput {
  log_type: LogType;
  patient_id: string;
  /** Normalised to ISO 8601 UTC with milliseconds. */
  timestamp: string;
  payload: Record<string, unknown>;
  idempotency_key?: string;
  trace?: Trace;
  metadata?: Record<string, unknown>;
}

export type EnvelopeResult =
  | { ok: true; log: ValidLogInput }
  | { ok: false; code: "validation_error" | "unknown_log_type"; message: string; details: ErrorDetail[] };

const PATIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Records a problem with one field of the log. A function of the module, not a closure
 * made per log: tsx names every closure it creates (esbuild's keepNames), which cost a
 * job's validation stage about 5% of its time.
 */
function addIssue(details: ErrorDetail[], at: (string | number)[], raw: Record<string, unknown>, field: string, message: string): void {
  details.push(fieldIssue([...at, field], message, echoField(raw, field)));
}

/**
 * The instants a log may carry: the log query's store (ClickHouse DateTime64(3)) holds
 * 1900-01-01 to 2299-12-31, and one log beyond it would stop the projector for everyone.
 * Canonical stamps of four-digit years compare as text.
 */
/** Deepest nesting of objects and arrays in a log's payload or metadata. */
export const MAX_LOG_DEPTH = 64;

export const MIN_TIMESTAMP = "1900-01-01T00:00:00.000Z";
export const MAX_TIMESTAMP = "2299-12-31T23:59:59.999Z";

function checkTrace(v: unknown): boolean {
  if (typeof v === "string") return v.length > 0 && v.length <= 256;
  return isObject(v) && typeof v.object_type === "string" && typeof v.object_id === "string" && v.object_type !== "" && v.object_id !== "";
}

/**
 * Validates one log of a batch. `at` locates it in the request (["body","logs",3]) so
 * every detail points at the exact field, as the contract's validation item requires.
 */
export function validateEnvelope(raw: unknown, at: (string | number)[]): EnvelopeResult {
  if (!isObject(raw)) {
    return { ok: false, code: "validation_error", message: "log must be an object", details: [fieldIssue(at, "must be an object", raw)] };
  }
  const details: ErrorDetail[] = [];

  const rawType = raw.log_type ?? raw.event_type;
  const logType = typeof rawType === "string" ? resolveLogType(rawType) : undefined;
  if (typeof rawType !== "string") addIssue(details, at, raw, "log_type", "is required and must be a string");
  else if (!logType) {
    return {
      ok: false,
      code: "unknown_log_type",
      message: `unknown log type "${rawType}"`,
      details: [fieldIssue([...at, "log_type"], `unknown log type "${rawType}"; GET /v1/log-types lists the catalog`, rawType)],
    };
  }
  if (typeof raw.patient_id !== "string" || !PATIENT_ID.test(raw.patient_id)) addIssue(details, at, raw, "patient_id", "is required: a patient id of letters, digits, _ or -");
  const timestamp = canonicalTimestamp(raw.timestamp);
  if (timestamp === null) {
    const what = "an ISO 8601 datetime with a UTC offset and a real date, e.g. 2026-01-31T09:30:00Z";
    addIssue(details, at, raw, "timestamp", raw.timestamp === undefined ? `is required: ${what}` : `must be ${what}`);
  } else if (timestamp < MIN_TIMESTAMP || timestamp > MAX_TIMESTAMP) {
    addIssue(details, at, raw, "timestamp", `must be between ${MIN_TIMESTAMP} and ${MAX_TIMESTAMP} (UTC)`);
  }
  if (!isObject(raw.payload)) addIssue(details, at, raw, "payload", "is required and must be an object");
  if (raw.idempotency_key !== undefined && raw.idempotency_key !== null && (typeof raw.idempotency_key !== "string" || raw.idempotency_key.length === 0 || raw.idempotency_key.length > 255 || raw.idempotency_key.includes("\u0000"))) {
    addIssue(details, at, raw, "idempotency_key", "must be a string of 1 to 255 characters, without NUL");
  }
  if (raw.trace !== undefined && raw.trace !== null && !checkTrace(raw.trace)) addIssue(details, at, raw, "trace", 'must be a string or {"object_type","object_id"}');
  if (raw.metadata !== undefined && raw.metadata !== null && !isObject(raw.metadata)) addIssue(details, at, raw, "metadata", "must be an object");

  // Measured first: a payload a few thousand levels deep overflows every recursive step after.
  const tooDeep = (["payload", "metadata"] as const).filter((f) => nestedDeeperThan(raw[f], MAX_LOG_DEPTH));
  // Not echoed: measuring the value for the echo would recurse through it too.
  for (const f of tooDeep) details.push(fieldIssue([...at, f], `nests deeper than ${MAX_LOG_DEPTH} levels`, "(too deep)"));
  if (logType && isObject(raw.payload) && tooDeep.length === 0) {
    for (const p of validatePayload(logType, raw.payload)) {
      details.push(fieldIssue([...at, "payload", ...p.path], p.message, p.value));
    }
  }
  if (details.length > 0) {
    const first = details[0]!;
    const more = details.length > 1 ? ` (and ${details.length - 1} more)` : "";
    return { ok: false, code: "validation_error", message: `${first.field} ${first.message}${more}`, details };
  }
  const log: ValidLogInput = {
    log_type: logType!,
    patient_id: raw.patient_id as string,
    timestamp: timestamp!,
    payload: raw.payload as Record<string, unknown>,
  };
  if (typeof raw.idempotency_key === "string") log.idempotency_key = raw.idempotency_key;
  if (raw.trace !== undefined && raw.trace !== null) log.trace = raw.trace as Trace;
  if (isObject(raw.metadata)) log.metadata = raw.metadata;
  return { ok: true, log };
}
