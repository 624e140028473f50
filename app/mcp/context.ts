import { z } from "zod";
import { McpError, type CallToolResult, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { Principal, Scope } from "../../src/auth/scopes.js";
import { isAppError, type AppError } from "../../src/errors.js";
import type { Services } from "../services.js";
import type { Snapshot } from "../../src/state/state-reader.js";
import { toJson } from "./budget.js";
import type { CallOutcomes, PatientsRead } from "./call-outcomes.js";

/** What every tool, resource and prompt of one MCP request works with. */
export interface McpContext {
  services: Services;
  /** The caller, as the auth plugin resolved it; a patient token carries `patient_id`. */
  principal: Principal;
  /** Where a handler that failed says how, by call id, for the audit (see call-outcomes.ts). */
  outcomes: CallOutcomes;
  /** Where a project tool says, by call id, whose data it answered with, for the audit. */
  patientsRead: PatientsRead;
}

interface ToolBase<S extends z.ZodRawShape> {
  name: string;
  title: string;
  description: string;
  args: S;
  /**
   * The answer's JSON Schema (tools/list's outputSchema): every answer that is not an
   * error carries its JSON as structuredContent too, which a client may validate with it.
   */
  output: z.ZodObject;
}

/** A tool over one patient: it takes `patient_id` (see PATIENT_ID) besides `args`. */
export interface PatientToolDef<S extends z.ZodRawShape> extends ToolBase<S> {
  kind: "patient";
  run(ctx: McpContext, patientId: string, args: z.infer<z.ZodObject<S>>): Promise<CallToolResult>;
}

/**
 * A tool over the caller's project rather than one patient (finding a patient, queries
 * across patients): no `patient_id`, and its arguments are closed, so a stray patient_id
 * is refused rather than dropped (which would widen the answer to the whole project).
 */
export interface ProjectToolDef<S extends z.ZodRawShape> extends ToolBase<S> {
  kind: "project";
  /**
   * The scope its REST twin requires. POST /mcp itself only asks for mcp:patient-state,
   * so the tool checks this one at each call.
   */
  scope: Scope;
  /** False: a patient token is not offered the tool (tools/list leaves it out, a call is a tool error). */
  forPatientTokens: boolean;
  /** `read` records the patients whose data the answer carries (its arguments name none), for the call's audit entry. */
  run(ctx: McpContext, args: z.infer<z.ZodObject<S>>, read: (ids: string[], omitted?: number) => void): Promise<CallToolResult>;
}

export type ToolDef<S extends z.ZodRawShape = z.ZodRawShape> = PatientToolDef<S> | ProjectToolDef<S>;

export const defineTool = <S extends z.ZodRawShape>(t: Omit<PatientToolDef<S>, "kind">): PatientToolDef<S> => ({ kind: "patient", ...t });

export const defineProjectTool = <S extends z.ZodRawShape>(t: Omit<ProjectToolDef<S>, "kind">): ProjectToolDef<S> => ({ kind: "project", ...t });

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

/** Whether tools/list shows the tool to this caller. */
export const offeredTo = (principal: Principal, tool: ToolDef): boolean => tool.kind === "patient" || tool.forPatientTokens || !isBound(principal);

export function patientIdArg(principal: Principal) {
  return isBound(principal) ? PATIENT_ID.bound : PATIENT_ID.open;
}

/**
 * A JSON answer: as structuredContent, and as text content for clients that do not read
 * structured output (MCP asks for both). Freshness goes in _meta (REST puts it in headers).
 */
export function jsonResult(value: object, snap?: Snapshot): CallToolResult {
  return textResult(toJson(value), value, snap);
}

/** A text answer (a markdown document) with `structured`, the same answer as the tool's outputSchema has it. */
export function textResult(text: string, structured: object, snap?: Snapshot): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: structured as Record<string, unknown>, ...(snap ? { _meta: freshness(snap) } : {}) };
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

/**
 * The message of a client-side AppError, with the hint a model needs to try again.
 * `patientArg` is the argument that named the patient (patient_id, or query_logs' patient_ids).
 */
export function describeFailure(err: AppError, principal: Principal, patientArg = "patient_id"): string {
  if (err.code === "not_found" && err.message.startsWith("patient ")) {
    if (principal.patient_id !== undefined && err.message.startsWith(`patient ${principal.patient_id} `)) {
      return `${err.message}: the patient this credential is bound to has been deleted, so nothing can be read with it.`;
    }
    return principal.patient_id !== undefined
      ? `${err.message}: this credential reads only patient ${principal.patient_id}; leave ${patientArg} out to read that patient.`
      : `${err.message} in this project: check the id (service ids look like pat_01J...) and the project of the credential.`;
  }
  return err.message;
}

/** Runs a tool for the resolved patient, or over the project, turning domain failures (4xx AppErrors) into tool errors. */
export async function runTool(ctx: McpContext, tool: ToolDef, args: Record<string, unknown>, callId: RequestId): Promise<CallToolResult> {
  if (tool.kind === "project") return runProjectTool(ctx, tool, args, callId);
  const pid = typeof args.patient_id === "string" ? args.patient_id : ctx.principal.patient_id;
  if (pid === undefined) {
    return toolError("patient_id is required: this credential is not bound to one patient. Pass the service patient id (pat_...).");
  }
  return failedAs(ctx, callId, () => tool.run(ctx, pid, args), (err) => toolError(describeFailure(err, ctx.principal)));
}

/** Why the caller may not use a project tool, or undefined: the answer REST gives as a 403. */
function refusal(principal: Principal, tool: ProjectToolDef<z.ZodRawShape>): string | undefined {
  if (!offeredTo(principal, tool)) {
    return `${tool.name} is not available to a patient token: it works over the whole project, and this credential reads only patient ${principal.patient_id}.`;
  }
  if (!principal.scopes.has(tool.scope)) return `${tool.name} needs the scope ${tool.scope}, which this credential lacks (required scope: ${tool.scope}).`;
  return undefined;
}

async function runProjectTool(ctx: McpContext, tool: ProjectToolDef<z.ZodRawShape>, args: Record<string, unknown>, callId: RequestId): Promise<CallToolResult> {
  const refused = refusal(ctx.principal, tool);
  if (refused !== undefined) {
    ctx.outcomes.set(callId, 403);
    return toolError(refused);
  }
  const read = (ids: string[], omitted = 0) => ctx.patientsRead.set(callId, { ids, omitted });
  return failedAs(ctx, callId, () => tool.run(ctx, args, read), (err) => toolError(describeFailure(err, ctx.principal, "patient_ids")));
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
