import { resolveLogType, validatePayload } from "../../catalog/index.js";
import type { LogType } from "../../catalog/log-types.js";
import { isIdToken } from "../ids.js";
import { shortened, echoField, fieldIssue, type ErrorDetail } from "../errors.js";
import { nestedDeeperThan } from "../../catalog/json-shape.js";
import { hasLoneSurrogate, loneSurrogateMessage, loneSurrogatesIn } from "../unicode-text.js";
import type { Trace } from "../../readmodels/log-record.js";
import { canonicalTimestamp } from "../../readmodels/lib/time.js";

/** A submitted log that passed envelope and payload validation (patient not yet checked). */
export interface ValidLogInput {
  log_type: LogType;
  patient_id: string;
  /** Normalised to ISO 8601 UTC with milliseconds; the acceptance time when the client sent none. */
  timestamp: string;
  payload: Record<string, unknown>;
  idempotency_key?: string;
  trace?: Trace;
  metadata?: Record<string, unknown>;
  /** The client's own id of this log (the Olira SDK's `log_id`): a re-send of it within a day is a duplicate. */
  client_log_id?: string;
}

export type EnvelopeResult =
  | { ok: true; log: ValidLogInput }
  | { ok: false; code: "validation_error" | "unknown_log_type"; message: string; details: ErrorDetail[] };


/** A JSON object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The instants a log may carry: the log query's store (ClickHouse DateTime64(3)) holds
 * 1900-01-01 to 2299-12-31, and one log beyond it would stop the projector for everyone.
 * Canonical stamps of four-digit years compare as text.
 */
/** Deepest nesting of objects and arrays in a log's payload or metadata. */
export const MAX_LOG_DEPTH = 64;

export const MIN_TIMESTAMP = "1900-01-01T00:00:00.000Z";
export const MAX_TIMESTAMP = "2299-12-31T23:59:59.999Z";

/** A client-chosen key or id: 1 to 255 characters, without NUL (keys of the ledger are built on them). */
const isClientKey = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= 255 && !v.includes("\u0000");

/** Present and not null: the SDK sends every optional key, as null when unset. */
const given = (v: unknown) => v !== undefined && v !== null;

/**
 * Longest trace string, and longest `object_type` or `object_id` of a trace object, in
 * UTF-16 units: every identifier of a log is bounded, so no audit entry or ledger message
 * built from one can pass NATS's max_payload.
 */
export const MAX_TRACE_CHARS = 256;

const isTracePart = (v: unknown) => typeof v === "string" && v.length > 0 && v.length <= MAX_TRACE_CHARS;

function checkTrace(v: unknown): boolean {
  if (typeof v === "string") return isTracePart(v);
  return isObject(v) && isTracePart(v.object_type) && isTracePart(v.object_id);
}

/**
 * Validates one log of a batch. `at` locates it in the request (["body","logs",3]) so
 * every detail points at the exact field, as the contract's validation item requires.
 * `acceptedAt` (the batch's `ingested_at`) is the timestamp of a log sent without one, as
 * the hosted product does; without it (ingestion files) a timestamp is required.
 */
export function validateEnvelope(raw: unknown, at: (string | number)[], acceptedAt?: string): EnvelopeResult {
  if (!isObject(raw)) {
    return { ok: false, code: "validation_error", message: "log must be an object", details: [fieldIssue(at, "must be an object", raw)] };
  }
  const details: ErrorDetail[] = [];
  const issue = (field: string, message: string) => {
    details.push(fieldIssue([...at, field], message, echoField(raw, field)));
  };

  const rawType = raw.log_type ?? raw.event_type;
  const logType = typeof rawType === "string" ? resolveLogType(rawType) : undefined;
  if (typeof rawType !== "string") issue("log_type", "is required and must be a string");
  else if (!logType) {
    return {
      ok: false,
      code: "unknown_log_type",
      message: `unknown log type "${shortened(rawType)}"`,
      details: [fieldIssue([...at, "log_type"], `unknown log type "${shortened(rawType)}"; GET /v1/log-types lists the catalog`, rawType)],
    };
  }
  if (!isIdToken(raw.patient_id)) issue("patient_id", "is required: a patient id of letters, digits, _ or -");
  const timestamp = !given(raw.timestamp) && acceptedAt !== undefined ? acceptedAt : canonicalTimestamp(raw.timestamp);
  if (timestamp === null) {
    const what = "an ISO 8601 datetime with a UTC offset and a real date, e.g. 2026-01-31T09:30:00Z";
    issue("timestamp", raw.timestamp === undefined ? `is required: ${what}` : `must be ${what}`);
  } else if (timestamp < MIN_TIMESTAMP || timestamp > MAX_TIMESTAMP) {
    issue("timestamp", `must be between ${MIN_TIMESTAMP} and ${MAX_TIMESTAMP} (UTC)`);
  }
  if (!isObject(raw.payload)) issue("payload", "is required and must be an object");
  if (given(raw.idempotency_key) && !isClientKey(raw.idempotency_key)) issue("idempotency_key", "must be a string of 1 to 255 characters, without NUL");
  if (given(raw.log_id) && !isClientKey(raw.log_id)) issue("log_id", "must be a string of 1 to 255 characters, without NUL: the client's own id of this log");
  if (given(raw.trace) && !checkTrace(raw.trace)) issue("trace", `must be a string or {"object_type","object_id"}, each of 1 to ${MAX_TRACE_CHARS} characters`);
  if (given(raw.metadata) && !isObject(raw.metadata)) issue("metadata", "must be an object");
  if (given(raw.context) && !isObject(raw.context)) issue("context", "must be an object (the sending client's environment, service and version)");
  if (given(raw.write_back) && typeof raw.write_back !== "boolean") issue("write_back", "must be true or false");
  if (given(raw.write_back_integration_id) && typeof raw.write_back_integration_id !== "string") issue("write_back_integration_id", "must be a string");

  // Measured over the whole log before any recursive step: a payload, or any other field
  // (a trace object's extra key), a few thousand levels deep overflows the stack of the
  // schema check and of the JSON.stringify that stores the log.
  const tooDeep = nestedDeeperThan(raw, MAX_LOG_DEPTH + 1) ? Object.keys(raw).filter((f) => nestedDeeperThan(raw[f], MAX_LOG_DEPTH)) : [];
  // Not echoed: measuring the value for the echo would recurse through it too.
  for (const f of tooDeep) details.push(fieldIssue([...at, f], `nests deeper than ${MAX_LOG_DEPTH} levels`, "(too deep)"));
  if (tooDeep.length === 0 && hasLoneSurrogate(raw)) addSurrogateIssues(details, at, raw);
  if (logType && isObject(raw.payload) && tooDeep.length === 0) {
    for (const p of validatePayload(logType, raw.payload)) {
      details.push(fieldIssue([...at, "payload", ...p.path], p.message, p.value));
    }
  }
  const first = details[0];
  if (first !== undefined) {
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
  if (given(raw.trace)) log.trace = raw.trace as Trace;
  const metadata = withEnvelopeExtras(isObject(raw.metadata) ? raw.metadata : undefined, raw);
  if (metadata) log.metadata = metadata;
  if (typeof raw.log_id === "string") log.client_log_id = raw.log_id;
  return { ok: true, log };
}

/** Most lone surrogates of one log that are reported, each with its place. */
const SURROGATES_REPORTED = 10;

/**
 * Every string of a log must be Unicode text: ClickHouse, which serves the log query,
 * refuses a lone surrogate (half of a character, sent as a `\ud800` escape), and one such
 * log would fail every insert of its batch.
 */
function addSurrogateIssues(details: ErrorDetail[], at: (string | number)[], raw: Record<string, unknown>): void {
  for (const s of loneSurrogatesIn(raw, SURROGATES_REPORTED)) details.push(fieldIssue([...at, ...s.path], loneSurrogateMessage(s), s.text));
}

/**
 * The envelope's `context` (which client sent the log) and `log_id` (its id there) are kept
 * in the log's metadata, under those names, unless the metadata already has them. The
 * `write_back` flags ask the hosted product to write to an EHR; this service writes to
 * none, so they are checked and dropped.
 */
function withEnvelopeExtras(metadata: Record<string, unknown> | undefined, raw: Record<string, unknown>): Record<string, unknown> | undefined {
  const extras: [string, unknown][] = [];
  if (isObject(raw.context) && !(metadata && Object.hasOwn(metadata, "context"))) extras.push(["context", raw.context]);
  if (typeof raw.log_id === "string" && !(metadata && Object.hasOwn(metadata, "log_id"))) extras.push(["log_id", raw.log_id]);
  if (extras.length === 0) return metadata;
  return { ...metadata, ...Object.fromEntries(extras) };
}
