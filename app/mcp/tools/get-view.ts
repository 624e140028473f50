import { z } from "zod";
import { Type } from "@sinclair/typebox";
import type { View } from "../../../readmodels/views/index.js";
import { bounded } from "../budget.js";
import { defineTool, jsonResult, textResult, type McpContext } from "../context.js";
import { args } from "./args.js";
import { markdownView, rawView } from "./view-format.js";
import type { Horizon } from "../../../readmodels/as-of.js";
import { horizonFields } from "../../../src/state/as-of-read.js";
import { toolHorizon } from "./horizon.js";
import { viewAnswer } from "../../http/routes/state/answers.js";
import { BlockSchema } from "../../http/routes/state/schemas.js";
import { fromTypeBox, SHORTENED } from "./output.js";

/** A view as current as the state (read-your-writes), or at a horizon; shared with the views resource. */
export async function readView(ctx: McpContext, patientId: string, viewType: string, h?: Horizon) {
  return ctx.services.horizonReader.view(ctx.principal, patientId, viewType, h);
}

/** The raw JSON answer (the REST twin's shape), bounded; `at`: what a read at a horizon reflects. */
export const rawViewAnswer = (patientId: string, view: View, budget?: number, at: ReturnType<typeof horizonFields> = {}) =>
  bounded({ ...at, ...rawView(patientId, view) }, "Read one block at a time with get_view_block.", budget);

const schema = { view_type: args.viewType, format: args.format, ...args.horizon };

/** What only a raw answer holds; a markdown answer holds `format` and `markdown` instead. */
const RAW_ONLY = { view_id: true, valid_from: true, valid_to: true, window: true, content: true } as const;

/**
 * Either form in one object schema (an outputSchema is one object): the REST twin's raw
 * answer, its blocks without the copies REST adds for the hosted product's clients (see
 * blockOut), or {patient_id, as_of?, known_at?, view_type, format: "markdown", markdown}
 * holding the document the text content is. oneOf says which fields each form requires.
 */
const output = fromTypeBox(viewAnswer(Type.Omit(BlockSchema, ["template_ref", "result"])))
  .partial(RAW_ONLY)
  .extend({ format: z.literal("markdown").optional(), markdown: z.string().optional(), ...SHORTENED })
  .meta({ oneOf: [{ required: Object.keys(RAW_ONLY) }, { required: ["format", "markdown"] }] });

export const getView = defineTool({
  name: "get_view",
  title: "A view of the patient",
  description: [
    "Returns a view: a ready-made snapshot of one area of the patient's state, built from a template",
    "(symptom_snapshot, medication_snapshot, labs_snapshot, vitals_snapshot, profile_snapshot, engagement_snapshot,",
    "questionnaire_snapshot, device_snapshot). Blocks are in segments long_term (standing facts), week (the 7 calendar",
    "days up to today in the patient's time zone, given in window) and temp (things to follow up or ask, such as missed",
    "doses or critical values).",
    "Use it to answer 'how is the patient doing' questions or to prepare a summary; prefer it over raw modules.",
    "format raw (default): JSON {patient_id, view_type, view_id, valid_from, valid_to, window, content: {blocks, temp}}, each",
    "block {id, name, text (markdown bullets), segment, refs (ids of the logs its facts came from), data}.",
    "format markdown: one document, each block followed by its log ids. Cite refs when you report a fact.",
    "as_of / known_at: the view rendered from the state at a past time (event time / what had been sent in by then).",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const { snap, view } = await readView(ctx, pid, a.view_type, toolHorizon(a));
    const at = horizonFields(snap);
    if (a.format === "raw") return jsonResult(rawViewAnswer(pid, view, undefined, at), snap);
    const markdown = markdownView(view, at);
    return textResult(markdown, { patient_id: pid, ...at, view_type: view.view_type, format: "markdown", markdown }, snap);
  },
});
