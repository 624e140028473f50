import { ELEMENT, KEY, quote, type Ctx, type JsonDoc, type PathSeg } from "./context.js";

/**
 * Field references: `type`, `timestamp`, `trace`, `payload` and dotted payload paths such
 * as `payload.symptoms.0.score`. Nothing else is a field: tenancy columns, ids and
 * ingestion metadata stay out of reach of the body.
 */
export type Root = "type" | "timestamp" | "trace" | "payload";

export interface Field {
  root: Root;
  /** Segments after `payload` (empty for the columns and for the whole payload). */
  path: PathSeg[];
  /** The field as the body wrote it: the answer's key when no alias is given. */
  text: string;
  /** A path inside the array element an array select's `where` tests (root "payload" then stands for the element). */
  inElement?: boolean;
}

const ROOTS: readonly string[] = ["type", "timestamp", "trace", "payload"];
/** A 0-based array index (no leading zeros, so "01" is not silently "1"). */
const INDEX = /^(0|[1-9][0-9]{0,5})$/;
export const MAX_PATH_SEGMENTS = 8;

/** Parses a field reference, or returns the message saying what is wrong with it. */
export function parseField(input: unknown): Field | string {
  if (typeof input !== "string" || input === "") return "must be a field: type, timestamp, trace, payload or payload.<path>";
  const [root = "", ...rest] = input.split(".");
  if (!ROOTS.includes(root)) return `field ${quote(input)} is not allowed: a field starts with type, timestamp, trace or payload`;
  if (root !== "payload" && rest.length > 0) return `field ${quote(input)} is not allowed: ${root} has no sub-fields`;
  if (rest.length > MAX_PATH_SEGMENTS) return `field ${quote(input)} is too deep: at most ${MAX_PATH_SEGMENTS} segments after payload`;
  const path = segments(input, rest);
  return typeof path === "string" ? path : { root: root as Root, path, text: input };
}

function segments(input: string, rest: string[]): PathSeg[] | string {
  const path: PathSeg[] = [];
  for (const seg of rest) {
    if (INDEX.test(seg)) path.push(Number(seg));
    else if (KEY.test(seg)) path.push(seg);
    else return `field ${quote(input)} has an invalid segment ${quote(seg)}: a key is letters, digits and _ (not starting with a digit), an index is a number`;
  }
  return path;
}

/**
 * A path inside an element of the array `array` (an array select's `where` field or
 * `element`): dotted keys and indexes relative to the element (`name`, `code.system`).
 * The array's own path names the element itself (arrays of strings or numbers), and a
 * path that starts with it and a dot reads inside the element too, as the SDK's examples
 * write it (`payload.symptoms.name` for `name`).
 */
export function parseElementPath(input: unknown, array: Field): Field | string {
  if (typeof input !== "string" || input === "") return `must be a path inside each element of ${array.text}, such as name or code.system (${array.text} itself is the element)`;
  const relative = input === array.text ? "" : input.startsWith(`${array.text}.`) ? input.slice(array.text.length + 1) : input;
  const rest = relative === "" ? [] : relative.split(".");
  if (rest.length > MAX_PATH_SEGMENTS) return `path ${quote(input)} is too deep: at most ${MAX_PATH_SEGMENTS} segments inside an element`;
  const path = segments(input, rest);
  return typeof path === "string" ? path : { root: "payload", path, text: input, inElement: true };
}

/** The JSON path arguments of a payload or element path (fields.ts never reads an element from the JSON column). */
export function pathArgs(ctx: Ctx, f: Field): string {
  const doc: JsonDoc = f.inElement ? ELEMENT : "payload";
  return ctx.jsonArgs(f.path, doc);
}

/** A payload path, typed as the value compared with it (JS number → Float64, string → String, boolean → Bool). */
export type JsonScalar = "String" | "Float64" | "Bool";

/**
 * The value at a payload path as Nullable(type): NULL when the path is missing (ClickHouse
 * converts leniently, "5" reads as 5). Numbers of a key-only path come from the JSON column
 * (`numeric`); strings, booleans and paths through arrays from the text with JSONExtract.
 */
export function extract(ctx: Ctx, f: Field, type: JsonScalar): string {
  if (type === "Float64") return numeric(ctx, f);
  return `JSONExtract(${pathArgs(ctx, f)}, 'Nullable(${type})')`;
}

/**
 * A payload path as Nullable(Float64), as JSONExtract(…, 'Nullable(Float64)') reads it: a
 * number, a numeric string ("5", "1e3"), a boolean as 1 or 0; NULL for anything else or
 * nothing. From the JSON column this reads only the path's typed subcolumns (no parsing),
 * which is what makes filters and aggregations on payload numbers fast; the result is the
 * same for every value kind the JSON type infers from JSON text (tested on ClickHouse).
 */
export function numeric(ctx: Ctx, f: Field): string {
  const col = f.inElement ? undefined : ctx.jsonColumn(f.path);
  if (col === undefined) return `JSONExtract(${pathArgs(ctx, f)}, 'Nullable(Float64)')`;
  return `coalesce(toFloat64(${col}.:Int64), ${col}.:Float64, toFloat64(${col}.:UInt64), toFloat64OrNull(${col}.:String), toFloat64(${col}.:Bool))`;
}

/**
 * The field as answered: columns as they are, a payload path as raw JSON text ('' when
 * missing) that `shapeRows` parses, so the answer keeps the JSON type of each value. Always
 * from the text: the JSON type drops nulls and empty objects and reorders keys.
 */
export function rawExpr(ctx: Ctx, f: Field): string {
  if (f.root !== "payload") return f.root;
  return f.path.length === 0 ? "payload" : `JSONExtractRaw(${ctx.jsonArgs(f.path)})`;
}

/**
 * A group key: like `rawExpr`, but a number or boolean at a key-only path is written from
 * the JSON column (the same JSON value, in ClickHouse's shortest form, so 5 and 5.0 are one
 * group) without parsing the text; everything else still comes from the text.
 */
export function groupExpr(ctx: Ctx, f: Field): string {
  const col = f.root === "payload" ? ctx.jsonColumn(f.path) : undefined;
  if (col === undefined) return rawExpr(ctx, f);
  return `if(dynamicType(${col}) IN ('Int64', 'UInt64', 'Float64', 'Bool'), toJSONString(${col}), ${rawExpr(ctx, f)})`;
}

/**
 * ORDER BY terms for a field. A payload path sorts numbers numerically, then strings as
 * text; logs without either (missing, JSON null, objects, arrays) come last whichever the
 * direction (explicit NULLS LAST: they are not values to rank). The text is only parsed
 * where the path holds no number.
 */
export function orderTerms(ctx: Ctx, f: Field, desc: boolean): string[] {
  const dir = desc ? "DESC" : "ASC";
  if (f.root !== "payload") return [`${f.root} ${dir}`];
  const num = numeric(ctx, f);
  const args = ctx.jsonArgs(f.path);
  return [`${num} ${dir} NULLS LAST`, `if(isNull(${num}) AND JSONType(${args}) = 'String', JSONExtractString(${args}), NULL) ${dir} NULLS LAST`];
}
