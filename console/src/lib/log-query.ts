import type { LogQueryBody } from "../../../client/types.js";

type Node = NonNullable<LogQueryBody["filter"]>[number];
type Aggregation = NonNullable<LogQueryBody["aggregations"]>[number];
export type FilterOp = NonNullable<Node["op"]>;
export type AggOp = Aggregation["op"];

/** The operators the query builder takes (query/README.md says what each means). */
export const FILTER_OPS: FilterOp[] = ["eq", "neq", "gt", "gte", "lt", "lte", "in", "nin", "like", "ilike", "is", "exists", "contains"];
export const AGG_OPS: AggOp[] = ["count", "sum", "avg", "min", "max"];

/** A condition as the form holds it: every value typed as text. */
export interface ConditionText {
  field: string;
  op: FilterOp;
  value: string;
}
export interface AggregationText {
  op: AggOp;
  field: string;
  alias: string;
}
/** The query form's fields, all text, as a person types them. */
export interface QueryForm {
  logType: string;
  patientIds: string;
  since: string;
  until: string;
  conditions: ConditionText[];
  groupBy: string;
  aggregations: AggregationText[];
  limit: string;
}

export const emptyForm = (): QueryForm => ({ logType: "", patientIds: "", since: "", until: "", conditions: [], groupBy: "", aggregations: [], limit: "100" });

const list = (text: string) => text.split(",").map((s) => s.trim()).filter(Boolean);
/** A number typed as one reads as a number: payload.score gt 5 compares numbers, not text. */
const scalar = (text: string): string | number | boolean => (/^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text === "true" ? true : text === "false" ? false : text);

/** A condition's value as its operator takes it: a list for in and nin, null or "not_null" for is, a boolean for exists. */
function valueOf(c: ConditionText): Node["value"] {
  const t = c.value.trim();
  if (c.op === "in" || c.op === "nin") return list(t).map((v) => { const s = scalar(v); return typeof s === "boolean" ? v : s; });
  if (c.op === "is") return t === "null" || t === "" ? null : t;
  if (c.op === "exists") return t !== "false";
  return scalar(t);
}

/** The request body the form stands for: what the console sends, and shows so it can be reused. */
export function queryBody(f: QueryForm): LogQueryBody {
  const filter: Node[] = [];
  if (f.logType.trim()) filter.push({ field: "type", op: "eq", value: f.logType.trim() });
  if (f.since.trim()) filter.push({ field: "timestamp", op: "gte", value: f.since.trim() });
  if (f.until.trim()) filter.push({ field: "timestamp", op: "lt", value: f.until.trim() });
  for (const c of f.conditions) if (c.field.trim()) filter.push({ field: c.field.trim(), op: c.op, value: valueOf(c) });
  const patients = list(f.patientIds);
  const groupBy = list(f.groupBy);
  const aggregations = f.aggregations.filter((a) => a.alias.trim()).map((a): Aggregation => ({ op: a.op, alias: a.alias.trim(), ...(a.field.trim() ? { field: a.field.trim() } : {}) }));
  const limit = Number.parseInt(f.limit, 10);
  return {
    ...(patients.length ? { patient_ids: patients } : {}),
    ...(filter.length ? { filter } : {}),
    ...(groupBy.length ? { group_by: groupBy } : {}),
    ...(aggregations.length ? { aggregations } : {}),
    ...(Number.isFinite(limit) && limit > 0 ? { limit } : {}),
  };
}

/** The columns of a result: every key of its rows, in the order first met. */
export function columnsOf(rows: unknown[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) if (r && typeof r === "object") for (const k of Object.keys(r)) seen.add(k);
  return [...seen];
}

/** A cell as text: objects and lists as JSON, null and absent as nothing. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return v;
  return typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v);
}

/**
 * A text cell a spreadsheet would run as a formula (=, +, -, @, tab or carriage return
 * first) gets a leading apostrophe: payloads are free text from many sources, and a CSV
 * is opened in a spreadsheet (OWASP "CSV injection"). Numbers are left as they are.
 */
const inert = (v: unknown, text: string) => (typeof v === "string" && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text);

/** Rows as CSV (RFC 4180): a field quoted when it holds a quote, comma or line break. */
export function toCsv(columns: string[], rows: unknown[]): string {
  const field = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  const line = (cells: string[]) => cells.map(field).join(",");
  const cell = (r: unknown, c: string) => {
    const v = (r as Record<string, unknown>)[c];
    return inert(v, cellText(v));
  };
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r, c))))].join("\r\n") + "\r\n";
}
