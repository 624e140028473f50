import { isPlainObject, quote, type Ctx } from "./context.js";
import { parseField, type Field } from "./fields.js";
import { AGG_OPS, type AggOp } from "./types.js";
import { ARRAY_KEYS, isArrayForm, parseArraySelect, type ArraySelect } from "./array-select.js";

/**
 * The parts of a body that shape the answer: select, group_by, aggregations, order.
 * Each parser records problems on the context and returns what it could read; the
 * compiler builds SQL only when no problem was recorded.
 */

/** Answer keys, and nothing else from the body, are named like SQL identifiers; they still never reach SQL. */
// __proto__ would set the answer row's prototype instead of a key.
const ALIAS = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const ALIAS_RULE = "must be letters, digits and _ (not starting with a digit), at most 64 characters, and not __proto__";
const MAX_SELECT = 64;
const MAX_GROUP_KEYS = 8;
const MAX_AGGREGATIONS = 32;
const MAX_ORDER = 8;

export interface SelectItem {
  key: string;
  field: Field;
  /** The array form (`first`, `where`, `element`): `field` is the array. */
  array?: ArraySelect;
}

export interface AggItem {
  op: AggOp;
  field?: Field;
  alias: string;
}

export interface OrderItem {
  field: unknown;
  desc: boolean;
  index: number;
}

function items(ctx: Ctx, name: string, v: unknown, max: number, what: string): unknown[] {
  if (!Array.isArray(v) || v.length === 0) return ctx.fail([name], `must be a non-empty array of ${what}`, v) ?? [];
  if (v.length > max) return ctx.fail([name], `too costly: ${v.length} entries, at most ${max}`) ?? [];
  return v;
}

/** Refuses keys other than `allowed` in an entry object; false when the entry is unusable. */
function entry(ctx: Ctx, at: (string | number)[], item: unknown, allowed: string[], what: string): item is Record<string, unknown> {
  if (!isPlainObject(item)) return ctx.fail(at, `must be ${what}`, item) ?? false;
  const extra = Object.keys(item).find((k) => !allowed.includes(k));
  if (extra !== undefined) return ctx.fail([...at, extra], "is not an allowed field", item[extra]) ?? false;
  return true;
}

/** A field usable as a value: a column or a payload path, not the whole payload. */
function valueField(ctx: Ctx, at: (string | number)[], v: unknown): Field | undefined {
  const f = parseField(v);
  if (typeof f === "string") return ctx.fail(at, f, v);
  if (f.root === "payload" && f.path.length === 0) return ctx.fail(at, "needs a payload path such as payload.score", v);
  return f;
}

const SELECT_ITEM = "{path, alias?} or an array select {path, first, alias?, where?, element?}";

/**
 * `select`: [{path, alias?}] or the array form (array-select.ts); the whole payload may be
 * selected. Keys (alias, else path) are unique.
 */
export function parseSelect(ctx: Ctx, v: unknown): SelectItem[] {
  const out: SelectItem[] = [];
  const keys = new Set<string>();
  items(ctx, "select", v, MAX_SELECT, SELECT_ITEM).forEach((item, i) => {
    const at = ["select", i];
    if (!entry(ctx, at, item, ["path", "alias", ...ARRAY_KEYS], SELECT_ITEM)) return;
    const f = parseField(item.path);
    if (typeof f === "string") return ctx.fail([...at, "path"], f, item.path);
    if ("alias" in item && (typeof item.alias !== "string" || !ALIAS.test(item.alias))) return ctx.fail([...at, "alias"], ALIAS_RULE, item.alias);
    const array = isArrayForm(item) ? parseArraySelect(ctx, item, f, at) : undefined;
    if (isArrayForm(item) && array === undefined) return;
    const key = typeof item.alias === "string" ? item.alias : f.text;
    if (keys.has(key)) return ctx.fail([...at, "alias" in item ? "alias" : "path"], `duplicate key ${quote(key)}: give each selected field its own alias`, key);
    keys.add(key);
    out.push(array ? { key, field: f, array } : { key, field: f });
  });
  return out;
}

/** `group_by`: distinct fields; group rows carry each under its text (e.g. "payload.severity"). */
export function parseGroupBy(ctx: Ctx, v: unknown): Field[] {
  const out: Field[] = [];
  items(ctx, "group_by", v, MAX_GROUP_KEYS, "fields").forEach((item, i) => {
    const f = valueField(ctx, ["group_by", i], item);
    if (f === undefined) return;
    if (out.some((g) => g.text === f.text)) return ctx.fail(["group_by", i], `duplicate group key ${quote(f.text)}`, item);
    out.push(f);
  });
  return out;
}

/**
 * `aggregations`: count takes no field (it counts the group's logs); sum and avg take a
 * numeric payload path (values read as Float64; logs without a number there are skipped);
 * min and max take a payload path or timestamp.
 */
export function parseAggregations(ctx: Ctx, v: unknown, groupKeys: Field[]): AggItem[] {
  const out: AggItem[] = [];
  items(ctx, "aggregations", v, MAX_AGGREGATIONS, "{op, field?, alias}").forEach((item, i) => {
    const at = ["aggregations", i];
    if (!entry(ctx, at, item, ["op", "field", "alias"], "{op, field?, alias}")) return;
    const op = item.op;
    if (typeof op !== "string" || !(AGG_OPS as readonly string[]).includes(op)) return ctx.fail([...at, "op"], `must be one of ${AGG_OPS.join(", ")}`, op);
    if (typeof item.alias !== "string" || !ALIAS.test(item.alias)) return ctx.fail([...at, "alias"], ALIAS_RULE, item.alias);
    const alias = item.alias;
    if (out.some((a) => a.alias === alias) || groupKeys.some((g) => g.text === alias)) return ctx.fail([...at, "alias"], `duplicate key ${quote(alias)}`, alias);
    if (op === "count") {
      if ("field" in item) return ctx.fail([...at, "field"], "count takes no field: it counts the logs of each group", item.field);
      return out.push({ op: "count", alias });
    }
    const f = valueField(ctx, [...at, "field"], item.field);
    if (f === undefined) return;
    const timeOk = (op === "min" || op === "max") && f.root === "timestamp";
    if (f.root !== "payload" && !timeOk) return ctx.fail([...at, "field"], op === "min" || op === "max" ? `${op} needs a payload path or timestamp` : `${op} needs a numeric payload path`, item.field);
    out.push({ op: op as AggOp, field: f, alias });
  });
  return out;
}

/** `order`: [{field, desc?}]; the field is resolved by the compiler (a field for rows, a group key or alias for groups). */
export function parseOrder(ctx: Ctx, v: unknown): OrderItem[] {
  const out: OrderItem[] = [];
  items(ctx, "order", v, MAX_ORDER, "{field, desc?}").forEach((item, i) => {
    const at = ["order", i];
    if (!entry(ctx, at, item, ["field", "desc"], "{field, desc?}")) return;
    if ("desc" in item && typeof item.desc !== "boolean") return ctx.fail([...at, "desc"], "must be true or false", item.desc);
    out.push({ field: item.field, desc: item.desc === true, index: i });
  });
  return out;
}

/** Rows: ORDER BY fields by the usual rules. */
export function rowOrderField(ctx: Ctx, o: OrderItem): Field | undefined {
  return valueField(ctx, ["order", o.index, "field"], o.field);
}

/** Groups: ORDER BY a group key (`g{i}`) or an aggregation alias (`a{i}`). */
export function groupOrderColumn(ctx: Ctx, o: OrderItem, keys: Field[], aggs: AggItem[]): string | undefined {
  const g = keys.findIndex((k) => k.text === o.field);
  if (g >= 0) return `g${g}`;
  const a = aggs.findIndex((x) => x.alias === o.field);
  if (a >= 0) return `a${a}`;
  return ctx.fail(["order", o.index, "field"], "with group_by or aggregations, order by a group key or an aggregation alias", o.field);
}
