import type { z } from "zod";
import { bounded } from "../budget.js";
import { defineTool, jsonResult, type McpContext } from "../context.js";
import { args } from "./args.js";
import { assertModule } from "../../../src/state/state-reader.js";
import { STABLE_MODULES, type ModuleKey } from "../../../readmodels/module.js";
import type { Horizon } from "../../../readmodels/as-of.js";
import { horizonFields } from "../../../src/state/as-of-read.js";
import { toolHorizon } from "./horizon.js";
import { StableAnswer } from "../../http/routes/state/answers.js";
import { fromTypeBox, SHORTENED } from "./output.js";

/** The REST twin's answer (GET /v1/state/{pid}/stable), shared with the patient://{id}/stable resource. */
export async function stableAnswer(ctx: McpContext, patientId: string, modules?: string[], budget?: number, h?: Horizon) {
  const reader = ctx.services.stateReader;
  for (const k of modules ?? []) assertModule(k, "stable");
  const keys = (modules as ModuleKey[] | undefined)?.length ? (modules as ModuleKey[]) : STABLE_MODULES;
  const snap = await ctx.services.horizonReader.orPlain(ctx.principal, patientId, h, () => reader.snapshot(ctx.principal, patientId, keys));
  const answer = { patient_id: patientId, ...horizonFields(snap), modules: reader.stableModules(snap.stored, modules) };
  return { snap, answer: bounded(answer, "Ask for fewer modules (modules argument), or read the logs behind an entry with get_logs.", budget) };
}

const schema = { modules: args.stableModules, ...args.horizon };

const output = fromTypeBox(StableAnswer).extend(SHORTENED);

export const getStableData = defineTool({
  name: "get_stable_data",
  title: "Stable patient facts",
  description: [
    "Returns the patient's stable modules: slow-changing facts such as demographics, conditions and diagnoses,",
    "current medications, allergies, care team, emergency contacts, insurance, pharmacy, preferences, social",
    "determinants, procedures, immunizations, family history and devices.",
    "Use it first to learn who the patient is and what they are treated for. For rolling, event-driven data",
    "(symptoms, labs, vitals, adherence) use get_event_state_module; for a ready-made summary use get_view.",
    "Answer: JSON {patient_id, modules: {<module>: {module_type, payload, created_at, updated_at}}}; modules with no",
    "data yet are absent; created_at/updated_at are the event times of the first and latest log that changed the module.",
    "Entries carry `sources` with the ids of the logs they came from.",
    "as_of / known_at: the state at a past time (event time / what had been sent in by then); the answer then repeats them.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const { snap, answer } = await stableAnswer(ctx, pid, a.modules, undefined, toolHorizon(a));
    return jsonResult(answer, snap);
  },
});
