import { z } from "zod";
import { McpError, type CallToolResult, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../../src/auth/scopes.js";
import { isAppError, type AppError } from "../../src/errors.js";
import type { Services } from "../services.js";
import type { Snapshot } from "../../src/state/state-reader.js";
import { toJson } from "./budget.js";
import type { CallOutcomes } from "./call-outcomes.js";

/** What every tool, resource and prompt of one MCP request works with. */
export interface McpContext {
  services: Services;
  /** The caller, as the auth plugin resolved it; a patient token carries `patient_id`. */
  principal: Principal;
  /** Where a handler that failed says how, by call id, for the audit (see call-outcomes.ts). */
  outcomes: CallOutcomes;
}

/** One tool: its name, a description written for a model, its arguments and its handler. */
export interface ToolDef<S extends z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  /** Arguments besides `patient_id`, which every tool takes (see patientIdArg). */
  args: S;
  run(ctx: McpContext, patientId: string, args: z.infer<z.ZodObject<S>>): Promise<CallToolResult>;
}

export const defineTool = <S extends z.ZodRawShape>(t: ToolDef<S>): ToolDef<S> => t;

/**
 * The `patient_id` argument. With a patient token it is optional (the token's patient is
 * the default) and any other id is answered as not found; with any other credential it
 * is required, so the schema a model reads says exactly what to send. Built once: zod
 * compiles a schema on first use, and servers are built per request.
 */
export const PATIENT_ID = {
  bound: z.string().min(1).max(64).optional().describe(
    "Leave out: this credential is bound to one patient, who is used. Any other patient id is answered as not found."),
  open: z.string().min(1).max(64).describe("Service patient id (looks like pat_01J...) whose state to read."),
};

export const isBound = (principal: Principal): boolean => principal.patient_id !== undefined;

export function patientIdArg(principal: Principal) {
  return isBound(principal) ? PATIENT_ID.bound : PATIENT_ID.open;
}

/** Text content holding JSON; freshness goes in _meta (REST puts it in headers). */
export function jsonResult(value: unknown, snap?: Snapshot): CallToolResult {
  return { content: [{ type: "text", text: toJson(value) }], ...(snap ? { _meta: freshness(snap) } : {}) };
}

export function textResult(text: string, snap?: Snapshot): CallToolResult {
  return { content: [{ type: "text", text }], ...(snap ? { _meta: freshness(snap) } : {}) };
}

/**
 * `applied_seq` is the stream position the state includes; `stale` is set when waiting
 * for the caller's own recent writes ran out of time (the REST twin's x-pss-stale).
 */
function freshness(snap: Snapshot): Record<string, unknown> {
  return { "pss/applied_seq": snap.stored.applied_seq, ...(snap.current ? {} : { "pss/stale": true }) };
}

/**
 * A JSON-RPC error a handler throws (resources and prompts have no isError result). The
 * SDK answers any thrown error with its `code` and `message`; its own McpError would
 * prefix the message with "MCP error <code>: ", which then reaches the client doubled
 * (clients add their own prefix).
 */
export class ProtocolError extends Error {
  override name = "ProtocolError";
  constructor(readonly code: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A domain failure the model can act on: returned as a result, never thrown (protocol errors are thrown). */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/** The message of a client-side AppError, with the hint a model needs to try again. */
export function describeFailure(err: AppError, principal: Principal): string {
  if (err.code === "not_found" && err.message.startsWith("patient ")) {
    if (principal.patient_id !== undefined && err.message.startsWith(`patient ${principal.patient_id} `)) {
      return `${err.message}: the patient this credential is bound to has been deleted, so nothing can be read with it.`;
    }
    return principal.patient_id !== undefined
      ? `${err.message}: this credential reads only patient ${principal.patient_id}; leave patient_id out to read that patient.`
      : `${err.message} in this project: check the id (service ids look like pat_01J...) and the project of the credential.`;
  }
  return err.message;
}

/** Runs a tool for the resolved patient, turning domain failures (4xx AppErrors) into tool errors. */
export async function runTool(ctx: McpContext, tool: ToolDef<z.ZodRawShape>, args: Record<string, unknown>, callId: RequestId): Promise<CallToolResult> {
  const pid = typeof args.patient_id === "string" ? args.patient_id : ctx.principal.patient_id;
  if (pid === undefined) {
    return toolError("patient_id is required: this credential is not bound to one patient. Pass the service patient id (pat_...).");
  }
  return failedAs(ctx, callId, () => tool.run(ctx, pid, args), (err) => toolError(describeFailure(err, ctx.principal)));
}

/**
 * Runs a handler; a domain failure (a 4xx AppError) is recorded with its status for the
 * audit and answered by `answer`, which returns the result or throws the protocol error.
 */
export async function failedAs<T>(ctx: McpContext, callId: RequestId, run: () => Promise<T>, answer: (err: AppError) => T): Promise<T> {
  try {
    return await run();
  } catch (err) {
    // A protocol error is mapped by its code when it is sent.
    if (isAppError(err)) ctx.outcomes.set(callId, err.status);
    else if (!(err instanceof ProtocolError || err instanceof McpError)) ctx.outcomes.set(callId, 500);
    if (isAppError(err) && err.status < 500) return answer(err);
    throw err;
  }
}
