import { z } from "zod";
import { recentEntries } from "../../../readmodels/views/index.js";
import { fitCount } from "../budget.js";
import { defineTool, jsonResult } from "../context.js";
import { args } from "./args.js";
import { horizonFields, horizonTime } from "../../../src/state/as-of-read.js";
import { toolHorizon } from "./horizon.js";
import { RecentItemSchema } from "../../http/routes/state/schemas.js";
import { COUNT, CUT_PAGE, fromTypeBox, HORIZON } from "./output.js";

const schema = { view_type: args.viewType, limit: args.limit(10, 50), ...args.horizon };

/** The REST twin's, its entries as objects only (REST's `items`), not also as lines. */
const output = z.looseObject({
  patient_id: z.string(), ...HORIZON, view_type: z.string(), entries: z.array(fromTypeBox(RecentItemSchema)), count: COUNT, total_count: COUNT, ...CUT_PAGE,
});

export const getViewRecentEvents = defineTool({
  name: "get_view_recent_events",
  title: "Recent events behind a view",
  description: [
    "Returns the dated entries behind a view, newest first: each symptom report, dose, lab value, reading or profile",
    "change the view was built from, as a one-line summary with its log id. Use it for 'what happened lately' in one",
    "area, or to find the log to cite; get_logs gives the full payloads.",
    "Answer: JSON {patient_id, view_type, entries: [{timestamp, module_type, kind, summary, log_id}], count,",
    "total_count (entries available in all)}. as_of / known_at: the entries as of a past time, as get_view.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const h = toolHorizon(a);
    const snap = await ctx.services.horizonReader.orPlain(ctx.principal, pid, h, () => ctx.services.stateReader.snapshot(ctx.principal, pid));
    const now = ctx.services.stateReader.now();
    const r = recentEntries(a.view_type, snap.stored.state, a.limit, h ? horizonTime(h, now) : now);
    const wrap = (entries: readonly unknown[]) => ({ patient_id: pid, ...horizonFields(snap), view_type: a.view_type, entries, count: entries.length, total_count: r.total_count });
    const n = fitCount(r.entries, wrap);
    if (n === r.entries.length) return jsonResult(wrap(r.entries), snap);
    return jsonResult({ ...wrap(r.entries.slice(0, n)), truncated: true, note: "Over 20 kB: ask with a smaller limit, or page through get_logs." }, snap);
  },
});
