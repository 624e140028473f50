import { EVENT_MODULES } from "../../../readmodels/module.js";
import { defineTool, jsonResult } from "../context.js";

export const listEventStateModules = defineTool({
  name: "list_event_state_modules",
  title: "Event-state modules with data",
  description: [
    "Lists the patient's event-state modules that hold data: rolling, event-driven regions of state",
    `(possible modules: ${EVENT_MODULES.join(", ")}).`,
    "Use it to see what kinds of recent data exist before reading one with get_event_state_module.",
    "Answer: JSON {patient_id, modules: [{module_type, created_at, updated_at}]}, where the times are the event times",
    "of the first and latest log that changed the module (updated_at tells how recent the data is).",
  ].join(" "),
  args: {},
  async run(ctx, pid) {
    const reader = ctx.services.stateReader;
    const snap = await reader.snapshot(ctx.principal, pid);
    return jsonResult({ patient_id: pid, modules: reader.eventModuleList(snap.stored) }, snap);
  },
});
