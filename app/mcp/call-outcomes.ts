import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type RequestId } from "@modelcontextprotocol/sdk/types.js";

/**
 * What each JSON-RPC call of one POST /mcp came to, as an HTTP-like status by call id,
 * for that call's audit entry. The HTTP status says nothing here: a refused tool call
 * (another patient, an unknown module) is still a 200 carrying `isError`.
 */
export type CallOutcomes = Map<RequestId, number>;

const byRequest = new WeakMap<object, CallOutcomes>();

/** The outcomes recorded for a request (see watchOutcomes); undefined when it carried no call. */
export const callOutcomes = (req: object): CallOutcomes | undefined => byRequest.get(req);

/** Records one call's outcome for a request the route answered itself (no transport). */
export function recordOutcome(req: object, id: RequestId, status: number): void {
  byRequest.set(req, new Map([[id, status]]));
}

/**
 * Patients whose data a call answered with beyond those its arguments name (a project
 * tool's candidates or rows), by call id, for that call's audit entry: `omitted` counts
 * those past the list.
 */
export type PatientsRead = Map<RequestId, { ids: string[]; omitted: number }>;

const readByRequest = new WeakMap<object, PatientsRead>();

/** The patients recorded as read for a request (see trackPatientsRead). */
export const patientsRead = (req: object): PatientsRead | undefined => readByRequest.get(req);

/** Makes `read`, which the request's tools fill, the request's record of patients read. */
export function trackPatientsRead(req: object, read: PatientsRead): void {
  readByRequest.set(req, read);
}

/** JSON-RPC code the MCP spec gives "resource not found". */
export const RESOURCE_NOT_FOUND = -32002;

const UNPROCESSABLE_CODES = new Set<number>([ErrorCode.InvalidParams, ErrorCode.InvalidRequest, ErrorCode.ParseError]);
const NOT_FOUND_CODES = new Set<number>([ErrorCode.MethodNotFound, RESOURCE_NOT_FOUND]);

/** JSON-RPC error codes as the REST status of the same failure. */
function statusOfCode(code: number): number {
  if (UNPROCESSABLE_CODES.has(code)) return 422;
  if (NOT_FOUND_CODES.has(code)) return 404;
  return 500;
}

/**
 * Records, for `req`, the outcome of every answer the transport sends. A handler that
 * knows the precise status (a 404 patient, a 422 module) puts it in `known` first, by the
 * call's id; otherwise an `isError` result is a 422 (the SDK's own argument checks) and a
 * JSON-RPC error maps by its code.
 */
export function watchOutcomes(req: object, transport: Transport, known: CallOutcomes): void {
  const outcomes: CallOutcomes = new Map();
  byRequest.set(req, outcomes);
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const m = message as { id?: RequestId; result?: { isError?: unknown }; error?: { code?: unknown } };
    if (m.id !== undefined && (m.result !== undefined || m.error !== undefined)) {
      const fallback = m.error !== undefined ? statusOfCode(Number(m.error.code)) : m.result?.isError === true ? 422 : 200;
      outcomes.set(m.id, known.get(m.id) ?? fallback);
    }
    return send(message, options);
  };
}
