import { ErrorCode, type GetPromptResult, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { describeFailure, failedAs, ProtocolError, type McpContext } from "../context.js";

/** The patient a prompt is about: the argument, else the patient token's own patient. */
export function promptPatient(ctx: McpContext, patientId: string | undefined): string {
  const pid = patientId ?? ctx.principal.patient_id;
  if (pid === undefined) throw new ProtocolError(ErrorCode.InvalidParams, "patient_id is required: this credential is not bound to one patient");
  return pid;
}

/**
 * Resolves a prompt from live state. Prompts have no isError result, so a patient that
 * is not there (or not this token's) is an invalid-params error with the same message
 * the tools give.
 */
export function resolvePrompt(ctx: McpContext, callId: RequestId, build: () => Promise<GetPromptResult>): Promise<GetPromptResult> {
  return failedAs(ctx, callId, build, (err) => {
    throw new ProtocolError(ErrorCode.InvalidParams, describeFailure(err, ctx.principal), { cause: err });
  });
}

/** A prompt of one user message: the instruction followed by the material resolved from state. */
export const userMessage = (description: string, text: string): GetPromptResult => ({
  description,
  messages: [{ role: "user", content: { type: "text", text } }],
});

/** "[log_a, log_b]": how prompts ask the model to cite. */
export const cite = (ids: readonly string[]) => (ids.length === 0 ? "" : ` [${ids.join(", ")}]`);
