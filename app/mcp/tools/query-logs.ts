import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AGG_OPS, DEFAULT_LIMITS, FILTER_OPS } from "../../../query/index.js";
import { callerQueryScope, type QueryAnswer } from "../../../src/query/log-query-service.js";
import { fitCount } from "../budget.js";
import { shrink } from "../shrink.js";
import { defineProjectTool, jsonResult } from "../context.js";
import { QueryAnswerSchema } from "../../http/routes/query.js";
import { args } from "./args.js";
import { COUNT, CUT_PAGE, fromTypeBox } from "./output.js";

/** The REST twin's answer, with where the next page starts when there is one. */
type Answer = QueryAnswer & { next_offset?: number | null };

/**
 * A page of rows that fits the size budget: cut short (and marked) when it does not, with
 * next_offset right after the last row kept, so paging loses nothing.
 */
function boundedPage(answer: QueryAnswer, offset: number): Answer {
  const rows = answer.rows;
  if (rows === undefined) return answer;
  const wrap = (page: readonly unknown[]): Answer => ({ ...answer, count: page.length, rows: [...page], next_offset: answer.has_more ? offset + rows.length : null });
  const n = fitCount(rows, (p) => ({ ...wrap(p), next_offset: offset + rows.length }));
  if (n === rows.length) return wrap(rows);
  const page = n === 1 ? rows.slice(0, 1).map((r) => shrink(r, 18_000).value) : rows.slice(0, n);
  return { ...wrap(page), has_more: true, next_offset: offset + n, truncated: true, note: `Cut to ${n} rows to stay under 20 kB; continue with offset ${offset + n}, or narrow select.` } as Answer;
}

/** The REST twin's answer, with where the next page starts. */
const output = fromTypeBox(QueryAnswerSchema).extend({ next_offset: COUNT.nullable().optional(), ...CUT_PAGE });

export const queryLogs = defineProjectTool({
  name: "query_logs",
  title: "Query logs (counts, aggregates, trends)",
  description: [
    "Runs the log query builder (the body of REST POST /v1/state/logs/query) over this project's logs, or with",
    "patient_ids over a cohort or one patient; a patient token queries its own patient only. Use it for totals, averages,",
    "extremes and trends computed server side instead of paging through get_logs.",
    `filter: [{field, op, value}] ANDed, groups {or: [...]} / {and: [...]}; ops ${FILTER_OPS.join(", ")}.`,
    "Fields: type (the log type), timestamp (ISO 8601), trace, payload.<path> (array indexes 0-based, e.g.",
    "payload.symptoms.0.score). group_by: [field]; aggregations: [{op, field?, alias}] with op",
    `${AGG_OPS.join(", ")} (count takes no field); order: [{field, desc?}] by a group key or alias; count: true answers`,
    "{count} only; select: [{path, alias?}] picks fields of each row. Example, the average score per symptom: {filter:",
    "[{field: \"type\", op: \"eq\", value: \"symptom_report\"}], group_by: [\"payload.symptoms.0.name\"], aggregations:",
    "[{op: \"avg\", field: \"payload.symptoms.0.score\", alias: \"avg_score\"}, {op: \"count\", alias: \"n\"}]}.",
    `limit: rows or groups (default ${DEFAULT_LIMITS.defaultLimit}, at most ${DEFAULT_LIMITS.maxLimit}), offset to page.`,
    "Answer: JSON {count, rows, organization_id, patient_id, total_count (with include_total), has_more, next_offset}",
    "(rows: logs {id, type, timestamp, ingested_at, trace, payload}, or one row per group with its keys and aliases);",
    "a page over about 20 kB is cut (truncated: true) and next_offset continues after it. A body the builder refuses",
    "comes back as a tool error naming the field. Needs the scope sdk:state-read (as the REST route).",
  ].join(" "),
  scope: "sdk:state-read",
  forPatientTokens: true,
  args: args.queryBody,
  output,
  async run(ctx, body, read): Promise<CallToolResult> {
    const scope = await callerQueryScope(ctx.principal, body, (p, pid) => ctx.services.stateReader.authorize(p, pid));
    const r = await ctx.services.logQuery.run(body, scope);
    // The whole page's patients: a page cut to the size budget still read them all.
    read(r.patients.ids, r.patients.omitted);
    const offset = typeof body.offset === "number" ? body.offset : 0;
    // Staleness goes in _meta, as the REST twin's x-pss-stale header.
    return { ...jsonResult(boundedPage(r.answer, offset)), ...(r.current ? {} : { _meta: { "pss/stale": true } }) };
  },
});
