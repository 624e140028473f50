import { fieldIssue } from "../catalog/validation-item.js";
import { Ctx, isPlainObject } from "./context.js";
import { extract, groupExpr, orderTerms, rawExpr, type Field } from "./fields.js";
import { compileFilter } from "./filter.js";
import { arraySelectExpr } from "./array-select.js";
import { groupOrderColumn, parseAggregations, parseGroupBy, parseOrder, parseSelect, rowOrderField, type AggItem, type OrderItem, type SelectItem } from "./projection.js";
import { AUDIT_COLUMNS, DEFAULT_LIMITS, MAX_OFFSET, QueryValidationError, type CompileLimits, type CompileScope, type CompiledQuery, type QueryShape } from "./types.js";

const BODY_KEYS = ["patient_ids", "filter", "select", "order", "limit", "offset", "group_by", "aggregations", "count", "include_total", "single", "maybe_single", "typed"];
const FLAGS = ["count", "include_total", "single", "maybe_single", "typed"] as const;
type Flags = Record<(typeof FLAGS)[number], boolean>;

/** Deduplicated reads: the projector may have written a log twice before the merge (ReplacingMergeTree). */
const FROM = "FROM logs FINAL";

/**
 * Compiles a log query body (the contract's "Log query") into parameterized ClickHouse SQL.
 * Pure: no I/O, no clock. Tenancy comes from `scope`, never from the body. Throws
 * QueryValidationError (422) listing every problem found, each located in the body.
 */
export function compileLogQuery(body: unknown, scope: CompileScope, limits: CompileLimits = DEFAULT_LIMITS): CompiledQuery {
  const ctx = new Ctx(limits);
  if (!isPlainObject(body)) throw new QueryValidationError([fieldIssue(["body"], "must be a JSON object", body)]);
  for (const k of Object.keys(body)) if (!BODY_KEYS.includes(k)) ctx.fail([k], "is not an allowed field", body[k]);
  const flags = Object.fromEntries(FLAGS.map((k) => [k, flag(ctx, body, k)])) as Flags;
  const limit = integer(ctx, body, "limit", 1, limits.maxLimit) ?? limits.defaultLimit;
  const offset = integer(ctx, body, "offset", 0, MAX_OFFSET) ?? 0;

  const where = [...scopeConditions(ctx, scope, body.patient_ids)];
  const filter = compileFilter(ctx, body.filter);
  if (filter !== undefined) where.push(`(${filter})`);
  const whereSql = where.join(" AND ");

  const grouped = body.group_by !== undefined || body.aggregations !== undefined;
  const select = body.select === undefined ? undefined : parseSelect(ctx, body.select);
  const keys = body.group_by === undefined ? [] : parseGroupBy(ctx, body.group_by);
  const aggs = body.aggregations === undefined ? [] : parseAggregations(ctx, body.aggregations, keys);
  const order = body.order === undefined ? [] : parseOrder(ctx, body.order);
  conflicts(ctx, flags, select, grouped, keys);
  const orderSql = grouped ? groupOrder(ctx, order, keys, aggs) : rowOrder(ctx, order);
  if (ctx.issues.length > 0) throw new QueryValidationError(ctx.issues);

  const base = { single: flags.single, maybeSingle: flags.maybe_single, typed: flags.typed };
  if (flags.count) return { ...base, kind: "count", sql: `SELECT count() AS n\n${FROM}\nWHERE ${whereSql}`, params: ctx.params, shape: {}, limit: 0, offset: 0 };

  // single/maybe_single: two rows are enough to tell "exactly one" from "more than one".
  const rows = flags.single || flags.maybe_single ? 2 : limit;
  const page = `LIMIT ${ctx.named("limit", "UInt32", rows + 1)} OFFSET ${ctx.named("offset", "UInt32", offset)}`;
  const { sql, countSql } = grouped ? groupSql(ctx, whereSql, keys, aggs, orderSql, page) : rowsSql(ctx, whereSql, select, orderSql, page);
  const { limit: _limit, offset: _offset, audit_max: _auditMax, ...countParams } = ctx.params;
  return {
    ...base, kind: grouped ? "group" : "rows", sql, params: ctx.params, shape: shapeOf(select, grouped, keys, aggs), limit: rows, offset,
    ...(flags.include_total ? { countSql, countParams } : {}),
  };
}

/** The columns of a whole log row; `shapeRows` answers trace and trace_type as one `trace` object. */
const LOG_ROW = ["id", "type", "timestamp", "ingested_at", "trace", "trace_type", "payload"];

/**
 * Columns read for the audit only (shapeRows never answers them; see auditedPatients): the
 * patient of each row, and for each group the patients whose logs made it, listed up to
 * AUDIT_GROUP_PATIENTS and all of them counted. A row need not name its patient in the
 * answer, but its payload is that patient's data, so the audit entry must say whose.
 */
const AUDIT_GROUP_PATIENTS = 1000;
const AUDIT_ROW_COLUMN = `patient_id AS ${AUDIT_COLUMNS.patient}`;
const auditGroupColumns = (ctx: Ctx) => [
  `arraySlice(groupUniqArray(patient_id) AS audit_all, 1, ${ctx.named("audit_max", "UInt32", AUDIT_GROUP_PATIENTS)}) AS ${AUDIT_COLUMNS.patients}`,
  `length(audit_all) AS ${AUDIT_COLUMNS.patientCount}`,
];

/** Log rows (or the selected columns `s{i}`), and the count of matching logs. */
function rowsSql(ctx: Ctx, where: string, select: SelectItem[] | undefined, order: string, page: string): { sql: string; countSql: string } {
  const cols = [...(select ? select.map((s, i) => `${selectExpr(ctx, s)} AS s${i}`) : LOG_ROW), AUDIT_ROW_COLUMN];
  return {
    sql: `SELECT ${cols.join(", ")}\n${FROM}\nWHERE ${where}\nORDER BY ${order}\n${page}`,
    countSql: `SELECT count() AS n\n${FROM}\nWHERE ${where}`,
  };
}

/** A selected field's column: an array select, the trace as [type, text] (made an object by shapeRows), or the field as answered. */
function selectExpr(ctx: Ctx, s: SelectItem): string {
  if (s.array) return arraySelectExpr(ctx, s.field, s.array);
  return s.field.root === "trace" ? "[trace_type, trace]" : rawExpr(ctx, s.field);
}

/** Group keys `g{i}` and aggregations `a{i}`, and the count of groups. */
function groupSql(ctx: Ctx, where: string, keys: Field[], aggs: AggItem[], order: string, page: string): { sql: string; countSql: string } {
  const gcols = keys.map((f, i) => `${groupExpr(ctx, f)} AS g${i}`);
  const acols = aggs.map((a, i) => `${aggExpr(ctx, a)} AS a${i}`);
  const groupBy = keys.length > 0 ? `\nGROUP BY ${keys.map((_, i) => `g${i}`).join(", ")}` : "";
  return {
    sql: `SELECT ${[...gcols, ...acols, ...auditGroupColumns(ctx)].join(", ")}\n${FROM}\nWHERE ${where}${groupBy}${order ? `\nORDER BY ${order}` : ""}\n${page}`,
    // Aggregations without group_by make exactly one group.
    countSql: keys.length > 0 ? `SELECT count() AS n FROM (SELECT ${gcols.join(", ")}\n${FROM}\nWHERE ${where}${groupBy})` : "SELECT 1 AS n",
  };
}

function shapeOf(select: SelectItem[] | undefined, grouped: boolean, keys: Field[], aggs: AggItem[]): QueryShape {
  const shape: QueryShape = {};
  if (select) shape.select = select.map((s) => (s.array ? { key: s.key, path: s.field.text, array: s.array.first ? "first" : "list" } : { key: s.key, path: s.field.text }));
  if (grouped) {
    shape.groupKeys = keys.map((f) => f.text);
    shape.aggregations = aggs.map((a) => (a.field ? { alias: a.alias, op: a.op, field: a.field.text } : { alias: a.alias, op: a.op }));
  }
  return shape;
}

/** Organization and project always; the patient when the route or token names one, else an optional cohort. */
function scopeConditions(ctx: Ctx, scope: CompileScope, ids: unknown): string[] {
  const out = [`organization_id = ${ctx.named("org", "String", scope.organization_id)}`, `project_id = ${ctx.named("project", "String", scope.project_id)}`];
  if (scope.patient_id !== undefined) {
    // Repeating the bound patient is harmless; naming anyone else is refused, never widened.
    if (ids !== undefined && !(Array.isArray(ids) && ids.length > 0 && ids.every((id) => id === scope.patient_id))) {
      ctx.fail(["patient_ids"], "this query is bound to one patient: patient_ids may only name that patient", ids);
    }
    out.push(`patient_id = ${ctx.named("patient", "String", scope.patient_id)}`);
  } else if (ids !== undefined) {
    const max = ctx.limits.maxInList;
    if (!Array.isArray(ids) || ids.length === 0 || !ids.every((id) => typeof id === "string" && id !== "")) {
      ctx.fail(["patient_ids"], "must be a non-empty array of patient ids (omit it to query the whole organization)", ids);
    } else if (ids.length > max) {
      ctx.fail(["patient_ids"], `too costly: ${ids.length} patients, at most ${max}`);
    } else {
      out.push(`patient_id IN ${ctx.named("patients", "Array(String)", [...new Set(ids)])}`);
    }
  }
  return out;
}

/** Combinations the contract refuses, each reported on the key that breaks it. */
function conflicts(ctx: Ctx, flags: Flags, select: SelectItem[] | undefined, grouped: boolean, keys: Field[]): void {
  if (flags.single && flags.maybe_single) ctx.fail(["maybe_single"], "cannot be combined with single");
  if (flags.count) {
    const clash = [select && "select", grouped && "group_by/aggregations", flags.single && "single", flags.maybe_single && "maybe_single"].filter(Boolean);
    if (clash.length > 0) ctx.fail(["count"], `count answers a number, not rows: remove ${clash.join(", ")}`, true);
  }
  if (flags.typed && (select || grouped || flags.count)) {
    ctx.fail(["typed"], "typed rows are whole log entries: not valid with select, group_by, aggregations or count", true);
  }
  if (grouped && select) {
    select.forEach((s, i) => {
      if (s.array) ctx.fail(["select", i], "an array select reads each log's payload: not with group_by or aggregations", s.field.text);
      else if (!keys.some((k) => k.text === s.field.text)) ctx.fail(["select", i, "path"], "with group_by, select may only name group keys", s.field.text);
    });
  }
}

/** Client order, then id in the last direction so equal keys page deterministically; default newest first. */
function rowOrder(ctx: Ctx, order: OrderItem[]): string {
  if (order.length === 0) return "timestamp DESC, id DESC";
  const terms = order.flatMap((o) => {
    const f = rowOrderField(ctx, o);
    return f ? orderTerms(ctx, f, o.desc) : [];
  });
  return [...terms, `id ${order[order.length - 1]?.desc ? "DESC" : "ASC"}`].join(", ");
}

/** Client order over group keys and aggregations, then every group key ascending for determinism. */
function groupOrder(ctx: Ctx, order: OrderItem[], keys: Field[], aggs: AggItem[]): string {
  const terms: string[] = [];
  const used = new Set<string>();
  for (const o of order) {
    const col = groupOrderColumn(ctx, o, keys, aggs);
    if (col === undefined || used.has(col)) continue;
    used.add(col);
    terms.push(`${col} ${o.desc ? "DESC" : "ASC"} NULLS LAST`);
  }
  for (let i = 0; i < keys.length; i++) if (!used.has(`g${i}`)) terms.push(`g${i} ASC`);
  return terms.join(", ");
}

/**
 * An aggregation's SQL. min and max of a timestamp over no logs are NULL (ClickHouse's
 * plain min gives 1970); of a payload path they are the numbers' when the path holds any,
 * else the strings' (by text), written as JSON text for the shaper to parse.
 */
function aggExpr(ctx: Ctx, a: AggItem): string {
  if (a.op === "count" || a.field === undefined) return "count()";
  if (a.field.root === "timestamp") return `${a.op}OrNull(timestamp)`;
  const num = extract(ctx, a.field, "Float64");
  if (a.op === "min" || a.op === "max") {
    const text = extract(ctx, a.field, "String");
    return `if(count(${num}) > 0, toJSONString(${a.op}(${num})), toJSONString(${a.op}OrNull(${text})))`;
  }
  return `${a.op}(${num})`;
}

function flag(ctx: Ctx, body: Record<string, unknown>, key: string): boolean {
  const v = body[key];
  if (v === undefined) return false;
  if (typeof v !== "boolean") return ctx.fail([key], "must be true or false", v) ?? false;
  return v;
}

function integer(ctx: Ctx, body: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) return ctx.fail([key], `must be an integer of at least ${min}`, v);
  if (v > max) return ctx.fail([key], `too costly: at most ${max}`, v);
  return v;
}
