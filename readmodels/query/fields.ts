import { quote, type Ctx, type PathSeg } from "./context.js";

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
}

const ROOTS: readonly string[] = ["type", "timestamp", "trace", "payload"];
/** An object key. Keys with other characters are not reachable; that keeps paths unambiguous. */
const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
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
  const path: PathSeg[] = [];
  for (const seg of rest) {
    if (INDEX.test(seg)) path.push(Number(seg));
    else if (KEY.test(seg)) path.push(seg);
    else return `field ${quote(input)} has an invalid segment ${quote(seg)}: a key is letters, digits and _ (not starting with a digit), an index is a number`;
  }
  return { root: root as Root, path, text: input };
}

/** A payload path, typed as the value compared with it (JS number → Float64, string → String, boolean → Bool). */
export type JsonScalar = "String" | "Float64" | "Bool";

/** The value at a payload path as Nullable(type): NULL when the path is missing (ClickHouse converts leniently, "5" reads as 5). */
export function extract(ctx: Ctx, f: Field, type: JsonScalar): string {
  return `JSONExtract(${ctx.jsonArgs(f.path)}, 'Nullable(${type})')`;
}

/**
 * The field as answered: columns as they are, a payload path as raw JSON text ('' when
 * missing) that `shapeRows` parses, so the answer keeps the JSON type of each value.
 */
export function rawExpr(ctx: Ctx, f: Field): string {
  if (f.root !== "payload") return f.root;
  return f.path.length === 0 ? "payload" : `JSONExtractRaw(${ctx.jsonArgs(f.path)})`;
}

/**
 * ORDER BY terms for a field. A payload path sorts numbers numerically, then strings as
 * text; logs without the path come last either way (explicit NULLS LAST: JSON null and
 * missing are not values to rank).
 */
export function orderTerms(ctx: Ctx, f: Field, desc: boolean): string[] {
  const dir = desc ? "DESC" : "ASC";
  if (f.root !== "payload") return [`${f.root} ${dir}`];
  const args = ctx.jsonArgs(f.path);
  return [`${extract(ctx, f, "Float64")} ${dir} NULLS LAST`, `JSONExtractString(${args}) ${dir}`];
}
