import { z } from "zod";
import { EVENTS_CURSOR_PATTERN, eventMatcher, eventsCursorAfter, readEventsPage } from "../../../src/state/events-page.js";
import { fitCount } from "../budget.js";
import { defineTool, jsonResult } from "../context.js";
import { EventsPage } from "../../http/routes/state/answers.js";
import { logIdsParam } from "../../http/routes/state/schemas.js";
import { args } from "./args.js";
import { CUT_PAGE, fromTypeBox } from "./output.js";

const schema = {
  since: args.instant("Only events triggered (logs accepted) at or after this time."),
  until: args.instant("Only events triggered at or before this time."),
  log_ids: args.logIds("Only the events of these logs"),
  limit: args.limit(20, 100),
  cursor: z.string().regex(new RegExp(EVENTS_CURSOR_PATTERN), "a cursor is the next_cursor of a previous answer").max(500).optional()
    .describe("next_cursor of the previous page; leave out for the first page."),
};

const output = fromTypeBox(EventsPage).extend(CUT_PAGE);

export const getEvents = defineTool({
  name: "get_events",
  title: "State change audit",
  description: [
    "Returns the audit of what each applied log changed in the patient's state, oldest first: which modules, what",
    "kind of change and which fields. Use it to explain why the state says what it says, or when something changed",
    "(triggered_at is when the log was accepted). log_ids narrows it to the events of those logs (at most 100).",
    "For the logs' contents use get_logs.",
    "Answer: JSON {patient_id, count, events: [{id, trigger, log_type, status (applied or no_change), triggered_at,",
    "completed_at, source_event_log_id (the log's id), changes: [{module_type, kind, op, fields}]}], next_cursor}.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const named = logIdsParam(a.log_ids, ["arguments"]);
    const snap = await ctx.services.stateReader.snapshot(ctx.principal, pid);
    // The REST twin's paging and log_ids filter (src/state/events-page.ts).
    const match = eventMatcher({ log_ids: named && new Set(named) });
    const { rows, more } = await readEventsPage(ctx.services.stateStore, pid, { ...a, match }, ["arguments", "cursor"]);
    // The contract's event fields, as REST answers them (log_timestamp is the cursor's).
    const events = rows.map(({ event: { log_timestamp: _, ...e } }) => e);
    const wrap = (page: readonly unknown[], cursor: string | null) => ({ patient_id: pid, count: page.length, events: page, next_cursor: cursor });
    // Measured with a cursor as long as the one the answer will carry.
    const last = rows.at(-1);
    const n = fitCount(events, (p) => wrap(p, last ? eventsCursorAfter(last) : null));
    if (n === events.length) return jsonResult(wrap(events, more && last ? eventsCursorAfter(last) : null), snap);
    return jsonResult({ ...wrap(events.slice(0, n), eventsCursorAfter(rows[n - 1]!)), truncated: true, note: "Cut to stay under 20 kB; continue with next_cursor." }, snap);
  },
});
