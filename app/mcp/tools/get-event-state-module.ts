import type { z } from "zod";
import { bounded } from "../budget.js";
import { defineTool, jsonResult, type McpContext } from "../context.js";
import { args } from "./args.js";
import { assertModule } from "../../../src/state/state-reader.js";
import type { Horizon } from "../../../readmodels/as-of.js";
import { horizonFields } from "../../../src/state/as-of-read.js";
import { toolHorizon } from "./horizon.js";

/** The REST twin's answer (GET /v1/state/{pid}/event-modules/{type}), shared with its resource. */
export async function eventModuleAnswer(ctx: McpContext, patientId: string, moduleType: string, budget?: number, h?: Horizon) {
  const reader = ctx.services.stateReader;
  assertModule(moduleType, "event");
  const snap = await ctx.services.horizonReader.orPlain(ctx.principal, patientId, h, () => reader.snapshot(ctx.principal, patientId, [moduleType]));
  const answer = { patient_id: patientId, ...horizonFields(snap), ...reader.eventModule(snap.stored, moduleType) };
  return { snap, answer: bounded(answer, "The newest entries of each history are kept; get_logs with since/until pages through all of them.", budget) };
}

const schema = { module_type: args.moduleType, ...args.horizon };

export const getEventStateModule = defineTool({
  name: "get_event_state_module",
  title: "One event-state module",
  description: [
    "Returns one event-state module of the patient: symptoms (each tracked symptom with status, current score and",
    "history), lab_results (each test with latest value, abnormal flag and history), vitals (latest per measurement",
    "and history), adherence (recent doses taken or skipped, per-medication counts, adverse events), emotional_state,",
    "sleep, heart, glucose, physical_activity, engagement, clinical_context, questionnaires or conversations.",
    "Use it for the detail behind a view or to answer a question about recent data; list_event_state_modules says",
    "which modules hold data. A known module without data answers its empty payload with null times.",
    "as_of / known_at: the module at a past time (event time / what had been sent in by then).",
    "Answer: JSON {patient_id, module_type, payload, created_at, updated_at} (with as_of, known_at when asked); history entries carry log_id.",
  ].join(" "),
  args: schema,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const { snap, answer } = await eventModuleAnswer(ctx, pid, a.module_type, undefined, toolHorizon(a));
    return jsonResult(answer, snap);
  },
});
