import { readFile } from "node:fs/promises";
import type { AggOp, Condition, FilterOp, QueryAnswer, QueryBody } from "../../client/index.js";
import { int, list, str, UsageError, type Command, type Values } from "../command.js";
import { json, table } from "../output.js";

const OPS: Record<string, FilterOp> = { "=": "eq", "==": "eq", "!=": "neq", ">": "gt", ">=": "gte", "<": "lt", "<=": "lte", "~": "ilike" };
const WHERE = /^\s*([A-Za-z_][\w.]*)\s*(>=|<=|!=|==|=|>|<|~|\s+in\s+|\s+nin\s+|\s+contains\s+)\s*(.*)$/;

/** A value as typed on the command line: JSON when it parses (3, true, null, "3"), else the text. */
/** A JSON array of strings and numbers, or undefined. */
function jsonArray(s: string): (string | number)[] | undefined {
  try {
    const v = JSON.parse(s) as unknown;
    if (Array.isArray(v) && v.every((x): x is string | number => typeof x === "string" || typeof x === "number")) return v;
  } catch {
    // not JSON: comma-separated values
  }
  return undefined;
}

function literal(s: string): string | number | boolean | null {
  try {
    const v = JSON.parse(s) as unknown;
    if (v === null || ["string", "number", "boolean"].includes(typeof v)) return v as string | number | boolean | null;
  } catch {
    // Plain text such as symptom_report or 2026-07-01.
  }
  return s;
}

/** `payload.score>3`, `type=symptom_report`, `trace~visit-%`, `type in a,b`, `trace=null` → a filter condition. */
export function parseWhere(expr: string): Condition {
  const m = WHERE.exec(expr);
  if (!m) throw new UsageError(`cannot read --where ${JSON.stringify(expr)}: use FIELD OP VALUE with OP one of = != > >= < <= ~ in nin contains`);
  const [, field, rawOp, rawValue] = m as unknown as [string, string, string, string];
  const op = rawOp.trim() === "==" ? "=" : rawOp.trim();
  // `score => 5` or `score =< 5` would otherwise compare with the text "> 5": quote such a value as JSON ("=x").
  if (/^[=<>!~]/.test(rawValue)) throw new UsageError(`cannot read --where ${JSON.stringify(expr)}: no operator ${JSON.stringify(rawOp.trim() + rawValue.trim().slice(0, 2))}; use one of = != > >= < <= ~ in nin contains, and a value that starts with one of =<>!~ as a JSON string`);
  if (op === "in" || op === "nin") {
    // A JSON array as it is (["a","b"]); else comma-separated values.
    const whole = rawValue.trim().startsWith("[") ? jsonArray(rawValue.trim()) : undefined;
    if (whole) return { field, op, value: whole };
    return { field, op, value: rawValue.split(",").map((v) => literal(v.trim()) as string | number) };
  }
  if (op === "contains") return { field, op, value: literal(rawValue) };
  const value = literal(rawValue);
  if (value === null) {
    if (op === "=") return { field, op: "is", value: null };
    if (op === "!=") return { field, op: "is", value: "not_null" };
  }
  const filterOp = OPS[op];
  if (filterOp === undefined) throw new UsageError(`cannot read --where ${JSON.stringify(expr)}: unknown operator ${op}`);
  return { field, op: filterOp, value };
}

/** `timestamp`, `-timestamp`, `timestamp:desc` or `timestamp:asc` → an order term. */
function orderTerm(o: string): { field: string; desc?: true } {
  if (o.startsWith("-")) return { field: o.slice(1), desc: true };
  const m = /^(.*):([^:.]*)$/.exec(o);
  if (!m) return { field: o };
  if (m[2] === "desc") return { field: m[1]!, desc: true };
  if (m[2] === "asc") return { field: m[1]! };
  throw new UsageError(`--order ${JSON.stringify(o)}: the direction is asc or desc, not ${JSON.stringify(m[2])} (FIELD, FIELD:asc, FIELD:desc or -FIELD)`);
}

async function baseBody(values: Values): Promise<QueryBody> {
  const raw = str(values.body);
  const file = str(values.file);
  if (raw !== undefined && file !== undefined) throw new UsageError("give --body or --file, not both");
  const text = file !== undefined ? await readFile(file, "utf8") : raw?.startsWith("@") ? await readFile(raw.slice(1), "utf8") : raw;
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as QueryBody;
  } catch (err) {
    throw new UsageError(`the query body is not JSON: ${(err as Error).message}`, { cause: err });
  }
}

/** The wire body from --body/--file, extended by the flags. */
export async function queryBody(values: Values): Promise<QueryBody> {
  const b = await baseBody(values);
  const types = list(values.type);
  const filter = [...(b.filter ?? [])];
  const [onlyType] = types;
  if (types.length === 1 && onlyType !== undefined) filter.push({ field: "type", op: "eq", value: onlyType });
  if (types.length > 1) filter.push({ field: "type", op: "in", value: types });
  const where = values.where === undefined ? [] : Array.isArray(values.where) ? values.where.map(String) : [String(values.where)];
  filter.push(...where.map(parseWhere));
  if (filter.length > 0) b.filter = filter;
  const select = list(values.select).map((s) => (s.includes("=") ? { alias: s.slice(0, s.indexOf("=")), path: s.slice(s.indexOf("=") + 1) } : { path: s }));
  if (select.length > 0) b.select = [...(b.select ?? []), ...select];
  const order = list(values.order).map(orderTerm);
  if (order.length > 0) b.order = [...(b.order ?? []), ...order];
  const groupBy = list(values["group-by"]);
  if (groupBy.length > 0) b.group_by = [...(b.group_by ?? []), ...groupBy];
  const aggs = (Array.isArray(values.agg) ? values.agg.map(String) : values.agg === undefined ? [] : [String(values.agg)]).map((a) => {
    const [op, x, y] = a.split(":") as [AggOp, string?, string?];
    if (!["count", "sum", "avg", "min", "max"].includes(op)) throw new UsageError(`--agg ${a}: use count:ALIAS or sum|avg|min|max:FIELD:ALIAS`);
    return op === "count" ? { op, alias: x ?? "count" } : { op, field: x ?? "", alias: y ?? op };
  });
  if (aggs.length > 0) b.aggregations = [...(b.aggregations ?? []), ...aggs];
  const limit = int(values.limit, "limit");
  if (limit !== undefined) b.limit = limit;
  const offset = int(values.offset, "offset");
  if (offset !== undefined) b.offset = offset;
  if (values.count) b.count = true;
  if (values.total) b.include_total = true;
  return b;
}

/** A row for the table: a trace object as one text, type:id (or the id of a trace sent as a plain string). */
function tableRow(r: Record<string, unknown>): Record<string, unknown> {
  const t = r.trace as { object_type?: unknown; object_id?: unknown } | null | undefined;
  if (t === null || typeof t !== "object" || typeof t.object_id !== "string") return r;
  return { ...r, trace: typeof t.object_type === "string" ? `${t.object_type}:${t.object_id}` : t.object_id };
}

export const queryCommand: Command = {
  name: "query",
  summary: "Query logs with a JSON body or flags; print a table or JSON",
  help: `Usage: pss query [--patient ID ...] [--type T ...] [--where EXPR ...] [--select F,...]
                 [--order F[:desc]] [--limit N] [--offset N] [--count] [--total]
                 [--group-by F] [--agg OP:FIELD:ALIAS] [--body JSON|@FILE | --file FILE]

Runs the log query (POST /v1/state/logs/query, or /v1/state/{id}/logs/query for one
--patient; several --patient make a cohort). Fields: type, timestamp, trace, payload and
dotted payload paths. Flags add to a --body.

  --where EXPR       FIELD OP VALUE; OP: = (==) != > >= < <= ~ (ilike, % wildcard), in, nin,
                     contains. VALUE is JSON when it parses (3, true, "3"), else text;
                     in/nin take a,b,c or a JSON array (["a","b"]);
                     =null / !=null test presence. Repeat to AND conditions.
  --select F,...     Fields to return; alias=path renames (score=payload.score)
  --order F[:desc]   Sort term (or --order=-F for descending); repeatable
  --count            Print the number of matching logs only
  --total            Also report the total matching, ignoring --limit
  --group-by F       Group rows; add --agg count:n or --agg avg:payload.score:avg
  --dry-run          Print the body instead of sending it

Examples:
  pss query --patient pat_01J... --type symptom_report --where 'payload.symptoms.0.score>3' --limit 10
  pss query --type lab_results --group-by payload.results.0.loinc_code --agg count:n --json
  pss query --body '{"filter":[{"field":"trace","op":"ilike","value":"visit-%"}]}' --count`,
  options: {
    body: { type: "string" }, file: { type: "string" }, patient: { type: "string", multiple: true }, type: { type: "string", multiple: true },
    where: { type: "string", multiple: true }, select: { type: "string", multiple: true }, order: { type: "string", multiple: true },
    limit: { type: "string" }, offset: { type: "string" }, count: { type: "boolean" }, total: { type: "boolean" },
    "group-by": { type: "string", multiple: true }, agg: { type: "string", multiple: true }, "dry-run": { type: "boolean" },
  },
  async run({ args, values, io, client }) {
    if (args.length > 0) throw new UsageError(`unexpected argument ${args[0]}`);
    const body = await queryBody(values);
    const patients = list(values.patient);
    if (patients.length > 1) body.patient_ids = [...(body.patient_ids ?? []), ...patients];
    if (values["dry-run"]) {
      io.out(`${json(body)}\n`);
      return 0;
    }
    const c = await client();
    const q = patients.length === 1 ? c.logs(patients[0], body) : c.query(body);
    if (body.count) {
      const n = await q.count();
      io.out(values.json ? `${json({ count: n })}\n` : `${n}\n`);
      return 0;
    }
    const rows = await q.run();
    const answer: QueryAnswer = { count: rows.length, rows: [...rows], total_count: rows.totalCount, has_more: rows.hasMore };
    if (values.json) {
      io.out(`${json(answer)}\n`);
      return 0;
    }
    io.out(`${table([...rows].map((r) => tableRow(r as unknown as Record<string, unknown>)))}\n`);
    const total = rows.totalCount !== null ? ` of ${rows.totalCount}` : "";
    io.err(`${rows.length}${total} rows${rows.hasMore ? " (more: raise --limit or use --offset)" : ""}\n`);
    return 0;
  },
};
