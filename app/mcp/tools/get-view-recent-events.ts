import { z } from "zod";
import { fitCount } from "../budget.js";
import { defineTool, jsonResult } from "../context.js";
import { args } from "./args.js";
import { horizonFields, horizonTime } from "../../../src/state/as-of-read.js";
import { RECENT_CURSOR_MAX, recentPage } from "../../../src/state/recent-page.js";
import { toolHorizon } from "./horizon.js";
import { RecentItemSchema } from "../../http/routes/state/schemas.js";
import { COUNT, CUT_PAGE, fromTypeBox, HORIZON } from "./output.js";

const schema = {
  view_type: args.viewType,
  limit: args.limit(10, 50),
  since: args.instant("Only entries with an event time at or after this time."),
  // Longer than other tools' cursors: it carries the last entry's sort key (src/state/recent-page.ts).
  cursor: z.string().min(1).max(RECENT_CURSOR_MAX).optional().describe("next_cursor of the previous page; leave out for the newest entries."),
  ...args.horizon,
};

/** The REST twin's, its entries as objects only (REST's `items`), not also as lines. */
const output = z.looseObject({
  patient_id: z.string(), ...HORIZON, view_type: z.string(), entries: z.array(fromTypeBox(RecentItemSchema)), count: COUNT, total_count: COUNT, next_cursor: z.string().nullable(), ...CUT_PAGE,
});

export const getViewRecentEvents = defineTool({
  name: "get_view_recent_events",
  title: "Recent events behind a view",
  description: [
    "Returns the dated entries behind a view, newest first: each symptom report, dose, lab value, reading or profile",
    "change the view was built from, as a one-line summary with its log id. Use it for 'what happened lately' in one",
    "area, or to find the log to cite; get_logs gives the full payloads. since: only entries at or after it. Pass",
    "next_cursor back as cursor for older entries; null means no more. The entries are those the modules keep (about",
    "the last 50 of each kind): older entries are in get_logs.",
    "Answer: JSON {patient_id, view_type, entries: [{timestamp, module_type, kind, summary, log_id}], count,",
    "total_count (entries at or after since, on every page), next_cursor}. as_of / known_at: the entries as of a past time, as get_view.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const h = toolHorizon(a);
    const snap = await ctx.services.horizonReader.orPlain(ctx.principal, pid, h, () => ctx.services.stateReader.snapshot(ctx.principal, pid));
    const r = recentPage(a.view_type, snap.stored.state, horizonTime(h, ctx.services.stateReader.now()), a, ["arguments", "cursor"]);
    const wrap = (entries: readonly unknown[], next_cursor: string | null) =>
      ({ patient_id: pid, ...horizonFields(snap), view_type: a.view_type, entries, count: entries.length, total_count: r.total_count, next_cursor });
    // Measured with the longest cursor a cut page could carry: the one after the longest summary.
    const longest = r.entries.reduce((m, e, i) => (e.summary.length > r.entries[m]!.summary.length ? i : m), 0);
    const n = fitCount(r.entries, (p) => wrap(p, r.entries.length ? r.cursorAfter(longest + 1) : null));
    if (n === r.entries.length) return jsonResult(wrap(r.entries, r.next_cursor), snap);
    return jsonResult({ ...wrap(r.entries.slice(0, n), r.cursorAfter(n)), truncated: true, note: "Over 20 kB: continue with next_cursor, or ask with a smaller limit." }, snap);
  },
});
