import { z } from "zod";
import { LOG_TYPES, resolveLogType } from "../../../catalog/index.js";
import { readPatientLogs, type LogQuery } from "../../../src/state/log-reader.js";
import { fitCount } from "../budget.js";
import { shrink } from "../shrink.js";
import { defineTool, jsonResult, toolError, type McpContext } from "../context.js";
import { LogsPage } from "../../http/routes/state/answers.js";
import { logIdsParam } from "../../http/routes/state/schemas.js";
import { args } from "./args.js";
import { CUT_PAGE, fromTypeBox } from "./output.js";

const schema = {
  log_types: z.array(z.string().min(1).max(100)).max(60).optional()
    // Named here, not by pointing at org://log-types: a patient token cannot read org:// resources.
    .describe(`Only these log types (legacy aliases work too): ${LOG_TYPES.join(", ")}.`),
  since: args.since,
  until: args.until,
  trace: z.string().min(1).max(200).optional().describe("Only logs with this trace (a string, or object_type:object_id for an object trace)."),
  log_ids: args.logIds("Only these logs"),
  limit: args.limit(20, 100),
  cursor: args.cursor,
};

const output = fromTypeBox(LogsPage).extend(CUT_PAGE);

const read = (ctx: McpContext, pid: string, q: LogQuery) =>
  readPatientLogs({ js: ctx.services.topology.js, jsm: ctx.services.topology.jsm, names: ctx.services.topology.names }, ctx.principal, pid, q);

export const getLogs = defineTool({
  name: "get_logs",
  title: "The patient's logs",
  description: [
    "Returns the patient's raw logs (the facts everything else is built from), newest first, filtered by event time",
    "(since, until), log type and trace, one page at a time. Use it to see the full payload behind a fact (refs and",
    "log_id values in other answers are these ids: log_ids fetches those logs, at most 100 per call) or to answer",
    "questions the modules and views do not cover.",
    "Answer: JSON {patient_id, count, logs: [{id, type, timestamp, ingested_at, payload, trace ({object_type, object_id},",
    "object_type null for a trace sent as a string; null for none)}], next_cursor};",
    "pass next_cursor back as cursor for the next (older) page; null means no more. A page is cut short to stay",
    "under about 20 kB (truncated: true), and next_cursor then continues right after it.",
  ].join(" "),
  args: schema,
  output,
  async run(ctx, pid, a: z.infer<z.ZodObject<typeof schema>>) {
    const unknown = (a.log_types ?? []).filter((t) => resolveLogType(t) === undefined);
    if (unknown.length > 0) return toolError(`unknown log type ${unknown.join(", ")}; known log types: ${LOG_TYPES.join(", ")}`);
    await ctx.services.stateReader.authorize(ctx.principal, pid);
    const q: LogQuery = {
      since: a.since,
      until: a.until,
      // An empty list filters nothing, as REST's empty ?log_types= does.
      log_types: a.log_types && a.log_types.length > 0 ? a.log_types : undefined,
      trace: a.trace,
      log_ids: logIdsParam(a.log_ids, ["arguments"]),
      limit: a.limit,
      cursor: a.cursor,
      order: "desc",
    };
    let r = await read(ctx, pid, q);
    const wrap = (logs: readonly unknown[]) => ({ patient_id: pid, count: logs.length, logs, next_cursor: r.next_cursor });
    const n = fitCount(r.logs, wrap);
    if (n === r.logs.length) return jsonResult(wrap(r.logs));
    // Read the shorter page again, so that next_cursor is the log reader's own and continues after it.
    r = await read(ctx, pid, { ...q, limit: n });
    const page = n === 1 ? r.logs.map((l) => shrink(l, 18_000).value) : r.logs;
    return jsonResult({ ...wrap(page), truncated: true, note: `Cut to ${n} logs to stay under 20 kB; continue with cursor ${r.next_cursor}.` });
  },
});
