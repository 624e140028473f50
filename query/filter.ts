import { LOG_TYPE_ALIASES } from "../catalog/aliases.js";
import { isPlainObject, type Ctx } from "./context.js";
import { extract, parseElementPath, parseField, pathArgs, type Field } from "./fields.js";
import { FILTER_OPS, type FilterOp } from "./types.js";
import { calendarDayMs } from "../catalog/calendar.js";

/**
 * The `filter` list: items ANDed, `{"or":[…]}` / `{"and":[…]}` groups nesting up to
 * maxDepth. Every value is bound as a parameter; the SQL text only holds operators, column
 * names, function names and placeholders. Conditions follow SQL three-valued logic: on a log
 * that lacks the path, every op except `is` null and `exists` false is not true (neq and
 * nin included).
 */
export function compileFilter(ctx: Ctx, filter: unknown): string | undefined {
  if (filter === undefined) return undefined;
  if (!Array.isArray(filter)) return ctx.fail(["filter"], "must be an array of conditions", filter);
  const sql = list(ctx, { field: parseField }, filter, ["filter"], 0, "AND");
  if (ctx.conditions > ctx.limits.maxConditions) {
    ctx.fail(["filter"], `too costly: more than ${ctx.limits.maxConditions} conditions (groups included); at most ${ctx.limits.maxConditions}`);
  }
  return sql === "" ? undefined : sql;
}

/**
 * An array select's `where`: one filter node (or a list, ANDed) whose fields are paths
 * inside each element of `array` (see parseElementPath), compiled to a condition on the
 * element ELEMENT. Every op applies as on a payload path, read from the element's text.
 * Its leaf conditions count toward the body's maxConditions with the filter's.
 */
export function compileElementFilter(ctx: Ctx, where: unknown, array: Field, loc: Loc): string | undefined {
  const walk: Walk = { field: (input) => parseElementPath(input, array) };
  const before = ctx.conditions;
  let sql: string | undefined;
  if (!Array.isArray(where)) sql = node(ctx, walk, where, loc, 0);
  else if (where.length === 0) return ctx.fail(loc, "must be a condition, a group, or a non-empty list of them (ANDed)", where);
  else sql = list(ctx, walk, where, loc, 0, "AND");
  if (before <= ctx.limits.maxConditions && ctx.conditions > ctx.limits.maxConditions) {
    ctx.fail(loc, `too costly: more than ${ctx.limits.maxConditions} conditions in filter and array selects; at most ${ctx.limits.maxConditions}`);
  }
  return sql;
}

type Loc = (string | number)[];

/** How a walk reads a condition's field: from the log (roots), or inside an array element. */
interface Walk {
  field: (input: unknown) => Field | string;
}

function list(ctx: Ctx, walk: Walk, items: unknown[], loc: Loc, depth: number, joiner: "AND" | "OR"): string | undefined {
  const parts: (string | undefined)[] = [];
  for (let i = 0; i < items.length; i++) {
    // Past the budget the query is refused whatever follows: walking a hostile list of a
    // hundred thousand conditions to the end took seconds.
    if (ctx.conditions > ctx.limits.maxConditions) return undefined;
    parts.push(node(ctx, walk, items[i], [...loc, i], depth));
  }
  if (parts.some((p) => p === undefined)) return undefined;
  return parts.length === 1 ? (parts[0]) : parts.map((p) => `(${p})`).join(` ${joiner} `);
}

function node(ctx: Ctx, walk: Walk, item: unknown, loc: Loc, depth: number): string | undefined {
  if (!isPlainObject(item)) return ctx.fail(loc, 'must be a condition {"field","op","value"} or a group {"or":[…]} / {"and":[…]}', item);
  const group = "or" in item ? "or" : "and" in item ? "and" : undefined;
  if (group === undefined) {
    ctx.conditions++;
    return condition(ctx, walk, item, loc);
  }
  const extra = Object.keys(item).find((k) => k !== group);
  if (extra !== undefined) return ctx.fail([...loc, extra], `is not allowed beside "${group}": a group holds only its list`, item[extra]);
  if (depth + 1 > ctx.limits.maxDepth) return ctx.fail([...loc, group], `too costly: groups nest at most ${ctx.limits.maxDepth} deep`);
  const children = item[group];
  if (!Array.isArray(children) || children.length === 0) return ctx.fail([...loc, group], "must be a non-empty array of conditions", children);
  return list(ctx, walk, children, [...loc, group], depth + 1, group === "or" ? "OR" : "AND");
}

const CMP = { eq: "=", neq: "!=", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

function condition(ctx: Ctx, walk: Walk, item: Record<string, unknown>, loc: Loc): string | undefined {
  const extra = Object.keys(item).find((k) => k !== "field" && k !== "op" && k !== "value");
  if (extra !== undefined) return ctx.fail([...loc, extra], "is not an allowed field", item[extra]);
  const f = walk.field(item.field);
  if (typeof f === "string") return ctx.fail([...loc, "field"], f, item.field);
  const op = item.op;
  if (typeof op !== "string" || !(FILTER_OPS as readonly string[]).includes(op)) {
    return ctx.fail([...loc, "op"], `must be one of ${FILTER_OPS.join(", ")}`, op);
  }
  if (!("value" in item)) return ctx.fail([...loc, "value"], "is required");
  const c: Cond = { ctx, f, op: op as FilterOp, v: item.value, at: [...loc, "value"] };
  if (f.inElement) return payloadCond(c);
  if (f.root === "payload") {
    return f.path.length > 0 ? payloadCond(c) : ctx.fail([...loc, "field"], "a filter on payload needs a path such as payload.score", item.field);
  }
  return f.root === "timestamp" ? timeCond(c) : textCond(c, f.root);
}

interface Cond {
  ctx: Ctx;
  f: Field;
  op: FilterOp;
  v: unknown;
  at: Loc;
}

const wrong = (c: Cond, expected: string) => c.ctx.fail(c.at, `must be ${expected} for ${c.op} on ${c.f.text}`, c.v);

/**
 * `col LIKE pattern` (or ILIKE) for a string pattern. `\` escapes `%`, `_` and itself, so a
 * pattern ending in a lone `\` means nothing: ClickHouse refuses it at run time, so it is
 * refused here, located, instead.
 */
function likeCond(c: Cond, col: string): string | undefined {
  const v = c.v;
  if (typeof v !== "string") return wrong(c, "a string pattern");
  let escapes = 0;
  for (let i = v.length - 1; i >= 0 && v.charCodeAt(i) === 92; i--) escapes++;
  if (escapes % 2 === 1) {
    return c.ctx.fail(c.at, `pattern ends with a lone escape (\\): write \\\\ for a literal backslash`, v);
  }
  return `${col} ${c.op === "like" ? "LIKE" : "ILIKE"} ${c.ctx.bind("String", v)}`;
}

/** A trace as the batch route takes it, `{"object_type","object_id"}`, as it is stored: `object_type:object_id`. */
function traceText(v: unknown): unknown {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
  const { object_type, object_id, ...rest } = v as Record<string, unknown>;
  return typeof object_type === "string" && typeof object_id === "string" && Object.keys(rest).length === 0 ? `${object_type}:${object_id}` : v;
}

/** `type` and `trace`: plain String columns; a log without a trace stores ''. */
function textCond(cond: Cond, col: "type" | "trace"): string | undefined {
  const c = col === "trace" ? { ...cond, v: Array.isArray(cond.v) ? cond.v.map(traceText) : traceText(cond.v) } : cond;
  const { ctx, op, v } = c;
  // Logs are stored under their canonical type: a legacy name (symptom_reported) finds them.
  const named = (x: unknown) => (col === "type" && typeof x === "string" && Object.hasOwn(LOG_TYPE_ALIASES, x) ? LOG_TYPE_ALIASES[x] : x);
  switch (op) {
    case "eq": case "neq":
      return typeof v === "string" ? `${col} ${CMP[op]} ${ctx.bind("String", named(v))}` : wrong(c, "a string");
    case "gt": case "gte": case "lt": case "lte":
      return typeof v === "string" ? `${col} ${CMP[op]} ${ctx.bind("String", v)}` : wrong(c, "a string");
    case "in": case "nin": {
      const list = scalarList(c, false);
      return list && `${col} ${op === "in" ? "IN" : "NOT IN"} ${ctx.bind("Array(String)", list.values.map(named))}`;
    }
    case "like": case "ilike":
      return likeCond(c, col);
    case "contains":
      return typeof v === "string" ? `position(${col}, ${ctx.bind("String", v)}) > 0` : wrong(c, "a string");
    case "is":
      if (col === "type") return ctx.fail(c.at, "is applies to trace and payload paths: type is never null", v);
      if (!isNullValue(v)) return wrong(c, 'null or "not_null"');
      return v === null ? "trace = ''" : "trace != ''";
    case "exists":
      return ctx.fail(c.at, `exists applies to payload paths, not ${col}`, v);
    default:
      return unreachable(op);
  }
}

/** `timestamp`: ISO 8601 values are bound as epoch milliseconds, exact at DateTime64(3). */
function timeCond(c: Cond): string | undefined {
  const { ctx, op, v } = c;
  switch (op) {
    case "eq": case "neq": case "gt": case "gte": case "lt": case "lte": {
      if (isLeapSecond(v)) return ctx.fail(c.at, `${LEAP_SECOND_REFUSED} (${op} on ${c.f.text})`, v);
      const ms = isoMs(v);
      return ms === undefined ? wrong(c, "an ISO 8601 timestamp") : `timestamp ${CMP[op]} fromUnixTimestamp64Milli(${ctx.bind("Int64", ms)}, 'UTC')`;
    }
    case "in": case "nin": {
      const list = scalarList(c, false);
      if (!list) return undefined;
      if (list.values.some(isLeapSecond)) return ctx.fail(c.at, `${LEAP_SECOND_REFUSED} (${op} on ${c.f.text})`, v);
      const ms = list.values.map(isoMs);
      if (ms.some((x) => x === undefined)) return wrong(c, "a list of ISO 8601 timestamps");
      return `toUnixTimestamp64Milli(timestamp) ${op === "in" ? "IN" : "NOT IN"} ${ctx.bind("Array(Int64)", ms)}`;
    }
    case "like": case "ilike": case "contains": case "is": case "exists":
      return ctx.fail(c.at, `${op} does not apply to timestamp; compare it with eq, gt, gte, lt, lte, in`, v);
    default:
      return unreachable(op);
  }
}

/** A payload path: the extraction follows the JS type of the value (number → Float64, string → String, boolean → Bool). */
function payloadCond(c: Cond): string | undefined {
  const { ctx, f, op, v } = c;
  switch (op) {
    case "eq": case "neq": case "gt": case "gte": case "lt": case "lte": {
      if (v === null) return ctx.fail(c.at, `null is not a value to compare; use op "is" with null`, v);
      const t = scalarType(v);
      if (t === undefined || (t === "Bool" && op !== "eq" && op !== "neq")) return wrong(c, op === "eq" || op === "neq" ? "a string, number or boolean" : "a string or number");
      return `${extract(ctx, f, t)} ${CMP[op]} ${ctx.bind(t, v)}`;
    }
    case "in": case "nin": {
      const list = scalarList(c, true);
      return list && `${extract(ctx, f, list.type)} ${op === "in" ? "IN" : "NOT IN"} ${ctx.bind(`Array(${list.type})`, list.values)}`;
    }
    case "like": case "ilike":
      return typeof v === "string" ? likeCond(c, extract(ctx, f, "String")) : wrong(c, "a string pattern");
    case "contains": {
      // An array holds the value (elements read as the value's type), or a string holds the
      // value as a substring; numbers and booleans only match array elements.
      const t = scalarType(v);
      if (t === undefined) return wrong(c, "a string, number or boolean");
      const args = pathArgs(ctx, f);
      const p = ctx.bind(t, v);
      const inArray = `has(JSONExtract(${args}, 'Array(Nullable(${t}))'), ${p})`;
      if (t !== "String") return inArray;
      return `if(JSONType(${args}) = 'Array', ${inArray}, JSONType(${args}) = 'String' AND position(JSONExtractString(${args}), ${p}) > 0)`;
    }
    case "is": // '' is a missing path, 'null' a JSON null: both are "is null".
      if (!isNullValue(v)) return wrong(c, 'null or "not_null"');
      return `JSONExtractRaw(${pathArgs(ctx, f)}) ${v === null ? "IN" : "NOT IN"} ('', 'null')`;
    case "exists": // Present at all, even as JSON null (unlike is not_null).
      if (typeof v !== "boolean") return wrong(c, "true or false");
      return `${v ? "" : "NOT "}JSONHas(${pathArgs(ctx, f)})`;
    default:
      return unreachable(op);
  }
}

/** `is` takes null (missing or JSON null) or "not_null" (present and not JSON null). */
const isNullValue = (v: unknown): v is null | "not_null" => v === null || v === "not_null";

function scalarType(v: unknown): "String" | "Float64" | "Bool" | undefined {
  if (typeof v === "string") return "String";
  if (typeof v === "number" && Number.isFinite(v)) return "Float64";
  if (typeof v === "boolean") return "Bool";
  return undefined;
}

/** in/nin lists: non-empty, at most maxInList, all strings (or all numbers where allowed). */
function scalarList(c: Cond, numbers: boolean): { type: "String" | "Float64"; values: unknown[] } | undefined {
  const { ctx, v } = c;
  const max = ctx.limits.maxInList;
  if (!Array.isArray(v) || v.length === 0) return wrong(c, "a non-empty array");
  if (v.length > max) return ctx.fail(c.at, `too costly: ${v.length} values, at most ${max}`);
  if (v.every((x) => typeof x === "string")) return { type: "String", values: v };
  if (numbers && v.every((x) => typeof x === "number" && Number.isFinite(x))) return { type: "Float64", values: v };
  return wrong(c, numbers ? "a list of only strings or only numbers" : "a list of strings");
}

/** A date, or a date-time with a UTC offset and optional seconds: the time bounds every route and tool takes. */
export const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;
const ISO = ISO_INSTANT;

const LEAP_SECOND = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:60(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether `v` names a leap second (…:60). No bound takes one: the catalog refuses it in a
 * log's timestamp (and Date cannot hold it), so a bound in the same forms as the times it
 * bounds never needs one, and one rule holds for the log query, REST and MCP alike.
 */
export const isLeapSecond = (v: unknown): boolean => typeof v === "string" && LEAP_SECOND.test(v);

/** What a time bound that names a leap second is told, wherever it is given. */
export const LEAP_SECOND_REFUSED = "must not be a leap second (:60), which a log's timestamp never is: send 23:59:59.999 or the next minute";

/** Epoch ms of an ISO 8601 timestamp (a date alone is UTC midnight; a time needs Z or an offset, never the server's zone). */
export function isoMs(v: unknown): number | undefined {
  const m = typeof v === "string" ? ISO.exec(v) : null;
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Date.parse accepts 2025-02-30 (as 2025-03-02); a calendar check refuses it.
  if (calendarDayMs(y, mo, d) === undefined) return undefined;
  const ms = Date.parse(v as string);
  return Number.isNaN(ms) ? undefined : ms;
}

function unreachable(x: never): never {
  throw new Error(`unhandled filter op ${String(x)}`);
}
