import type { z } from "zod";
import { readChanges } from "../../../src/state/changes-read.js";
import { bounded } from "../budget.js";
import { defineTool, jsonResult } from "../context.js";
import { ChangesSchema } from "../../http/routes/state/changes.js";
import { args } from "./args.js";
import { fromTypeBox, SHORTENED } from "./output.js";

const schema = {
  since: args.requiredInstant("The window's start: changes after it (by event time), such as the last visit's date."),
  until: args.instant("The window's end; default now."),
};

/** The REST twin's answer, and what `bounded` adds when it cut one. */
const output = fromTypeBox(ChangesSchema).extend(SHORTENED);

export const getChanges = defineTool({
  name: "get_changes",
  title: "What changed since a time",
  description: [
    "Answers 'what changed since the last visit' (or between two times) in one call, by clinical domain, every item",
    "with the log ids to cite: symptoms new, worsened, improved, resolved or returned (the last report in the window",
    "against where the symptom stood at its start); lab tests first seen and abnormal or critical results, each with",
    "the previous value; medications added, removed or changed, doses skipped and scheduled doses not reported;",
    "vital signs and device readings out of range; questionnaires with a clinically significant or worsened result;",
    "encounters, notes and plan items. Both ends are the state folded from the log at that time, so the answer is",
    "exact whatever the histories kept. Answer: JSON {patient_id, since, until, summary, logs_in_window: {total,",
    "by_type}, symptoms, labs, medications, vitals, devices, questionnaires, encounters}; each item {kind, what, at,",
    "log_ids, before?, after?}, newest first. Unchanged symptoms and normal results of known tests are not listed.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const until = a.until ?? ctx.services.stateReader.now();
    const { answer } = await readChanges(ctx.services.horizonReader, ctx.principal, pid, a.since, until, "arguments");
    return jsonResult(bounded(answer, "Narrow the window (since/until) for the full lists, or read a domain's module with get_event_state_module."));
  },
});
