import { jsonLengthUpTo } from "./json-depth.js";

/**
 * The one catalogue of errors. Every failure the service answers with is an AppError
 * carrying one of these codes; the Fastify error handler (src/http/error-handler.ts)
 * turns it into the spec's error body.
 */
export const ERROR_CATALOGUE = {
  bad_request: { status: 400, error_type: "bad_request_error" },
  authentication: { status: 401, error_type: "authentication_error" },
  authorization: { status: 403, error_type: "authorization_error" },
  not_found: { status: 404, error_type: "not_found_error" },
  method_not_allowed: { status: 405, error_type: "bad_request_error" },
  not_acceptable: { status: 406, error_type: "bad_request_error" },
  conflict: { status: 409, error_type: "conflict_error" },
  payload_too_large: { status: 413, error_type: "payload_too_large" },
  unsupported_media_type: { status: 415, error_type: "bad_request_error" },
  validation: { status: 422, error_type: "validation_error" },
  rate_limited: { status: 429, error_type: "server_error" },
  internal: { status: 500, error_type: "internal_server_error" },
  unavailable: { status: 503, error_type: "server_error" },
} as const;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** One item of an error body's `details`. Validation items carry field, location and input_value. */
export interface ErrorDetail {
  type: string;
  message: string;
  field?: string;
  location?: (string | number)[];
  input_value?: unknown;
  [extra: string]: unknown;
}

export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    options?: { cause?: unknown; headers?: Record<string, string> },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.headers = options?.headers;
  }
  readonly headers: Record<string, string> | undefined;
  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

export const notFound = (what: string, id?: string) =>
  new AppError("not_found", id === undefined ? `${what} not found` : `${what} ${id} not found`);

/** Most bytes of a value an error echoes as input_value; a larger one is described instead. */
const MAX_ECHO_BYTES = 2048;

/** Longest key of a location or field kept whole; a longer one (a hostile field name) is shortened. */
const MAX_KEY_CHARS = 128;

/** Most items an error body's `details` lists; past it the last item says how many were left out. */
export const MAX_ERROR_DETAILS = 100;

/**
 * The failing value as an error echoes it: a 5,001-log batch over the limit would
 * otherwise come back whole (megabytes), so a large array, object or string is named
 * by its size instead. Measuring stops past the limit, so echoing a value of megabytes,
 * or one nested thousands deep, costs no more than echoing a small one.
 */
export function echoValue(v: unknown): unknown {
  if (v === null || typeof v !== "object") {
    return typeof v === "string" && v.length > MAX_ECHO_BYTES ? `${v.slice(0, 200)}… (${v.length} characters)` : v;
  }
  if (jsonLengthUpTo(v, MAX_ECHO_BYTES) !== undefined) return v;
  return Array.isArray(v) ? `(an array of ${v.length} items, over ${MAX_ECHO_BYTES} bytes as JSON)` : `(an object of over ${MAX_ECHO_BYTES} bytes as JSON)`;
}

/**
 * What a detail echoes for `field` of `parent`: its value, or, when it is missing, the
 * object that lacks it, as pydantic (and so the hosted product) does.
 */
export function echoField(parent: unknown, field: string | number): unknown {
  const has = parent !== null && typeof parent === "object" && Object.hasOwn(parent, field);
  return echoValue(has ? (parent as Record<string | number, unknown>)[field] : parent);
}

/** A client's text as a message quotes it: a hostile one of megabytes is cut to its first 100 characters. */
export function shortened(text: string): string {
  return text.length > MAX_KEY_CHARS ? `${text.slice(0, 100)}… (${text.length} characters)` : text;
}

/** A validation detail for one field, located from the request root (e.g. ["body","logs",3,"payload","score"]). */
export function fieldIssue(location: (string | number)[], message: string, input_value?: unknown): ErrorDetail {
  const at = location.map((p) => (typeof p === "string" ? shortened(p) : p));
  const field = at.filter((p) => p !== "body" && p !== "query" && p !== "params").join(".");
  return { type: "value_error", message, field, location: at, input_value: echoValue(input_value) };
}

export interface ErrorBody {
  error: true;
  status_code: number;
  error_type: string;
  message: string;
  details: ErrorDetail[];
  timestamp: string;
}

/** The spec's error body; `details` past MAX_ERROR_DETAILS are left out, and the last item says how many. */
export function errorBody(status: number, error_type: string, message: string, details: ErrorDetail[] = []): ErrorBody {
  return { error: true, status_code: status, error_type, message, details: capDetails(details), timestamp: new Date().toISOString() };
}

function capDetails(details: ErrorDetail[]): ErrorDetail[] {
  if (details.length <= MAX_ERROR_DETAILS) return details;
  return [...details.slice(0, MAX_ERROR_DETAILS - 1), moreDetails(details.length - (MAX_ERROR_DETAILS - 1))];
}

/** The last item of a capped `details`: how many problems were left out (undefined: not counted). */
export function moreDetails(omitted?: number): ErrorDetail {
  const what = omitted === undefined ? "Other problems may follow" : `${omitted} more problems are not listed`;
  return { type: "more_details", message: `${what}; fix the ones above and send the request again`, ...(omitted === undefined ? {} : { omitted }) };
}
