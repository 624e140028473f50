/**
 * Typed errors of the client. Every answer that is not 2xx becomes one of these, built
 * from the service's error body (`{error, status_code, error_type, message, details,
 * timestamp}`), so callers branch on the class (or a predicate) rather than on numbers.
 */

import type { ErrorDetail } from "../catalog/validation-item.js";

/** One item of an error body's `details`; validation items also carry field, location and input_value. */
export type { ErrorDetail };

export interface PssErrorInit {
  status_code: number;
  error_type: string;
  details?: ErrorDetail[];
  /** The answer's body as received (parsed JSON, or text when it was not JSON). */
  body?: unknown;
  /** Request id from the answer's `x-request-id`, when the service sent one. */
  request_id?: string;
  cause?: unknown;
}

/** Base of every client error. `status_code` is 0 for failures that never got an HTTP answer. */
export class PssError extends Error {
  override name = "PssError";
  readonly status_code: number;
  readonly error_type: string;
  readonly details: ErrorDetail[];
  readonly body: unknown;
  readonly request_id: string | undefined;

  constructor(message: string, init: PssErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status_code = init.status_code;
    this.error_type = init.error_type;
    this.details = init.details ?? [];
    this.body = init.body;
    this.request_id = init.request_id;
  }
}

/** 400: malformed JSON or a request the service could not read. */
export class BadRequestError extends PssError {
  override name = "BadRequestError";
}
/** 401: missing, invalid, expired or revoked credential. */
export class AuthenticationError extends PssError {
  override name = "AuthenticationError";
}
/** 403: the credential lacks the scope the route needs. */
export class AuthorizationError extends PssError {
  override name = "AuthorizationError";
}
/** 404: unknown resource, or one of another project or organization (the service never says 403 for those). */
export class NotFoundError extends PssError {
  override name = "NotFoundError";
}
/** 409: an external identifier held by another patient, a taken slug, a duplicate job key, ... */
export class ConflictError extends PssError {
  override name = "ConflictError";
}
/** 413: the request body is over the service's size limit. */
export class PayloadTooLargeError extends PssError {
  override name = "PayloadTooLargeError";
}
/** 422: the request failed validation; `details` locates each problem. */
export class ValidationError extends PssError {
  override name = "ValidationError";
}
/** 429: over the rate limit after every retry. `retryAfter` is in seconds. */
export class RateLimitError extends PssError {
  override name = "RateLimitError";
  /** Seconds the service asked the client to wait (from `retry_after` or the Retry-After header). */
  readonly retryAfter: number | undefined;
  constructor(message: string, init: PssErrorInit & { retryAfter?: number }) {
    super(message, init);
    this.retryAfter = init.retryAfter;
  }
}
/** 5xx after every retry. */
export class ServerError extends PssError {
  override name = "ServerError";
}
/** No HTTP answer after every retry: refused connection, DNS failure, reset, time-out. */
export class NetworkError extends PssError {
  override name = "NetworkError";
  constructor(message: string, cause?: unknown) {
    super(message, { status_code: 0, error_type: "network_error", cause });
  }
}

const BY_STATUS: Record<number, typeof PssError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: AuthorizationError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: ValidationError,
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Seconds from a Retry-After header: delta-seconds or an HTTP date. */
export function parseRetryAfter(header: string | null): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const n = Number(header);
  if (Number.isFinite(n)) return Math.max(0, n);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/**
 * The typed error for a non-2xx answer. A body that is not the spec's error body (a proxy's
 * HTML page, say) still gives the right class, with the text as message.
 */
export function errorFromResponse(status: number, body: unknown, headers: Headers): PssError {
  const spec = isObject(body) ? body : {};
  const message = typeof spec.message === "string" ? spec.message : typeof body === "string" && body.trim() !== "" ? body.slice(0, 500) : `HTTP ${status}`;
  const details = Array.isArray(spec.details) ? (spec.details as ErrorDetail[]) : [];
  const requestId = headers.get("x-request-id");
  const init: PssErrorInit = {
    status_code: typeof spec.status_code === "number" ? spec.status_code : status,
    error_type: typeof spec.error_type === "string" ? spec.error_type : status >= 500 ? "server_error" : "error",
    details,
    body,
    ...(requestId ? { request_id: requestId } : {}),
  };
  if (status === 429) {
    const fromBody = details.find((d) => d.type === "rate_limit" && typeof d.retry_after === "number")?.retry_after as number | undefined;
    return new RateLimitError(message, { ...init, retryAfter: fromBody ?? parseRetryAfter(headers.get("retry-after")) });
  }
  if (status >= 500) return new ServerError(message, init);
  const Cls = BY_STATUS[status] ?? PssError;
  return new Cls(message, init);
}

export const isPssError = (err: unknown): err is PssError => err instanceof PssError;
export const isNotFound = (err: unknown): err is NotFoundError => err instanceof NotFoundError;
export const isConflict = (err: unknown): err is ConflictError => err instanceof ConflictError;
export const isValidationError = (err: unknown): err is ValidationError => err instanceof ValidationError;
export const isNetworkError = (err: unknown): err is NetworkError => err instanceof NetworkError;
/** Errors worth trying again later: network failures, 429 and 5xx. */
export const isRetryable = (err: unknown): boolean => err instanceof NetworkError || err instanceof RateLimitError || err instanceof ServerError;
