import { ELEMENT, type Ctx } from "./context.js";
import { parseElementPath, pathArgs, type Field } from "./fields.js";
import { compileElementFilter } from "./filter.js";

/**
 * The array form of a select item, `{path, first, alias?, where?, element?}`: `path` names
 * an array in the payload; `where` keeps the elements a filter node holds for (its fields
 * are paths inside the element); `element` reads a path from each kept element; `first`
 * answers the first of them (null when none), else the list ([] when none, or when the
 * path is missing or not an array). A kept element lacking `element`'s path reads null.
 */
export interface ArraySelect {
  first: boolean;
  /** The compiled `where`: a condition on ELEMENT. */
  where?: string;
  element?: Field;
}

/** The keys that make a select item the array form (`first` is the one the SDK always sends). */
export const ARRAY_KEYS = ["first", "where", "element"] as const;

export function isArrayForm(item: Record<string, unknown>): boolean {
  return ARRAY_KEYS.some((k) => k in item);
}

/** Reads the array form's own keys; `array` is its already parsed `path`. Problems are recorded on ctx. */
export function parseArraySelect(ctx: Ctx, item: Record<string, unknown>, array: Field, at: (string | number)[]): ArraySelect | undefined {
  if (array.root !== "payload" || array.path.length === 0) {
    return ctx.fail([...at, "path"], "an array select reads an array in the payload: path must be a payload path such as payload.symptoms", array.text);
  }
  if ("first" in item && typeof item.first !== "boolean") return ctx.fail([...at, "first"], "must be true (the first kept element, or null) or false (the list)", item.first);
  const out: ArraySelect = { first: item.first === true };
  if (item.where !== undefined) {
    const where = compileElementFilter(ctx, item.where, array, [...at, "where"]);
    if (where === undefined) return undefined;
    out.where = where;
  }
  if (item.element !== undefined) {
    const element = parseElementPath(item.element, array);
    if (typeof element === "string") return ctx.fail([...at, "element"], element, item.element);
    out.element = element;
  }
  return out;
}

/**
 * The SQL of an array select, over the elements' raw JSON text: `JSONExtractArrayRaw`
 * gives them as Array(String) (empty for a missing path or a non-array), `arrayFilter`
 * keeps those `where` holds for, `arrayMap` reads `element` from each ('' when missing),
 * and `first` takes element 1 ('' when there is none). `shapeRows` parses the text.
 */
export function arraySelectExpr(ctx: Ctx, array: Field, a: ArraySelect): string {
  let sql = `JSONExtractArrayRaw(${ctx.jsonArgs(array.path)})`;
  if (a.where !== undefined) sql = `arrayFilter(${ELEMENT} -> ${a.where}, ${sql})`;
  if (a.element !== undefined) sql = `arrayMap(${ELEMENT} -> JSONExtractRaw(${pathArgs(ctx, a.element)}), ${sql})`;
  return a.first ? `arrayElement(${sql}, 1)` : sql;
}
