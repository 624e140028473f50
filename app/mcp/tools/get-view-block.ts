import type { z } from "zod";
import { hasResult, TEMPLATE_BLOCKS, viewBlock } from "../../../readmodels/views/template-blocks.js";
import { AppError } from "../../../src/errors.js";
import { bounded } from "../budget.js";
import { defineTool, jsonResult } from "../context.js";
import { args } from "./args.js";
import { horizonFields } from "../../../src/state/as-of-read.js";
import { toolHorizon } from "./horizon.js";
import { ViewBlockAnswer } from "../../http/routes/state/answers.js";
import { fromTypeBox, SHORTENED } from "./output.js";

const schema = { view_type: args.viewType, block_id: args.blockId, ...args.horizon };

const output = fromTypeBox(ViewBlockAnswer).extend(SHORTENED);

export const getViewBlock = defineTool({
  name: "get_view_block",
  title: "One block of a view",
  description: [
    "Returns one block of a view with every id of the logs behind it: use it to read a single topic (for example",
    "symptom_snapshot/active_symptoms, medication_snapshot/missed_doses, labs_snapshot/critical_values,",
    "profile_snapshot/missing_essentials) without the whole view, or to get the full refs list to cite or to fetch",
    "those logs with get_logs. Block ids come from list_views_and_blocks.",
    "Answer: JSON {patient_id, view_type, block_id, block_name, segment, content (markdown bullets), data (the same",
    "facts as JSON), refs (log ids), has_result (false: the block has nothing to say yet, content empty),",
    "updated_at (the view's as-of time)}. as_of / known_at: as get_view.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const { snap, view: v } = await ctx.services.horizonReader.view(ctx.principal, pid, a.view_type, toolHorizon(a));
    const b = viewBlock(v, a.block_id);
    if (!b) {
      const known = TEMPLATE_BLOCKS[v.view_type].map((x) => x.id).join(", ");
      throw new AppError("not_found", `view ${v.view_type} has no block "${a.block_id}"; its blocks: ${known}`);
    }
    const answer = {
      patient_id: pid, ...horizonFields(snap), view_type: v.view_type, block_id: b.id, block_name: b.name, segment: b.segment,
      content: b.text, data: b.data, refs: b.refs, has_result: hasResult(b), updated_at: v.valid_from,
    };
    return jsonResult(bounded(answer, "Fetch the logs behind the block with get_logs for the detail."), snap);
  },
});
