import type { ErrorDetail } from "../catalog/validation-item.js";

export { echoField, echoValue, fieldIssue, shortened, type ErrorDetail } from "../catalog/validation-item.js";

/**
 * The one catalogue of errors. Every failure the service answers with is an AppError
 * carrying one of these codes; the Fastify error handler (app/http/error-handler.ts)
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

/** Most items an error body's `details` lists; past it the last item says how many were left out. */
export const MAX_ERROR_DETAILS = 100;

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
