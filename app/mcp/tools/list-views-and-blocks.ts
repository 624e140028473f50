import { z } from "zod";
import { blockListing } from "../../../readmodels/views/template-blocks.js";
import { defineTool, jsonResult } from "../context.js";
import { args } from "./args.js";
import { horizonFields } from "../../../src/state/as-of-read.js";
import { toolHorizon } from "./horizon.js";
import { BlockListing, ViewBlocks, ViewSummary } from "../../http/routes/state/answers.js";
import { fromTypeBox } from "./output.js";

const schema = { view_type: args.viewType.optional().describe("Only this view's blocks; every view when left out."), ...args.horizon };

/**
 * With view_type, the REST twin's blocks of one view; without, every view as REST lists
 * them, each with its blocks. oneOf says which fields each form requires.
 */
const output = fromTypeBox(ViewBlocks)
  .partial({ view_type: true, blocks: true })
  .extend({ views: z.array(fromTypeBox(ViewSummary).extend({ blocks: z.array(fromTypeBox(BlockListing)) })).optional() })
  .meta({ oneOf: [{ required: ["views"] }, { required: ["view_type", "blocks"] }] });

export const listViewsAndBlocks = defineTool({
  name: "list_views_and_blocks",
  title: "Views and their blocks",
  description: [
    "Lists the patient's views (one per template) and the blocks each holds, so you can pick what to read with",
    "get_view or get_view_block. Every block of the view's template is listed; has_result says whether it has content",
    "now (a view whose blocks all lack it has no data yet).",
    "Answer without view_type: JSON {patient_id, views: [{view_type, view_id, has_blocks, has_temp, blocks:",
    "[{block_id, block_name, segment, has_result}]}]}. With view_type: {patient_id, view_type, blocks: [...]}.",
    "has_temp means the view has follow-up items (segment temp): missing information, severe symptoms, critical",
    "lab values, missed doses. as_of / known_at: as get_view.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const horizon = ctx.services.horizonReader;
    const h = toolHorizon(a);
    if (a.view_type !== undefined) {
      const { snap, view: v } = await horizon.view(ctx.principal, pid, a.view_type, h);
      return jsonResult({ patient_id: pid, ...horizonFields(snap), view_type: v.view_type, blocks: blockListing(v) }, snap);
    }
    const { snap, views } = await horizon.allViews(ctx.principal, pid, h);
    return jsonResult({
      patient_id: pid,
      ...horizonFields(snap),
      views: views.map((v) => ({ view_type: v.view_type, view_id: v.view_id, has_blocks: v.blocks.length > 0, has_temp: v.temp.length > 0, blocks: blockListing(v) })),
    }, snap);
  },
});
