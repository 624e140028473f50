import { EVENT_MODULES } from "../../../readmodels/module.js";
import type { z } from "zod";
import { defineTool, jsonResult } from "../context.js";
import { horizonFields } from "../../../src/state/as-of-read.js";
import { args } from "./args.js";
import { toolHorizon } from "./horizon.js";
import { EventModuleList } from "../../http/routes/state/answers.js";
import { fromTypeBox } from "./output.js";

const schema = { ...args.horizon };

const output = fromTypeBox(EventModuleList);

export const listEventStateModules = defineTool({
  name: "list_event_state_modules",
  title: "Event-state modules with data",
  description: [
    "Lists the patient's event-state modules that hold data: rolling, event-driven regions of state",
    `(possible modules: ${EVENT_MODULES.join(", ")}).`,
    "Use it to see what kinds of recent data exist before reading one with get_event_state_module.",
    "Answer: JSON {patient_id, modules: [{module_type, created_at, updated_at}]}, where the times are the event times",
    "of the first and latest log that changed the module (updated_at tells how recent the data is).",
    "as_of / known_at: the modules that held data at a past time (event time / what had been sent in by then).",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const reader = ctx.services.stateReader;
    const snap = await ctx.services.horizonReader.orPlain(ctx.principal, pid, toolHorizon(a), () => reader.snapshot(ctx.principal, pid));
    return jsonResult({ patient_id: pid, ...horizonFields(snap), modules: reader.eventModuleList(snap.stored) }, snap);
  },
});
