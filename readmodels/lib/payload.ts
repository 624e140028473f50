/**
 * Small typed accessors over payloads. Payloads are validated by the catalog before they
 * are stored, but reducers never trust a shape they did not write: a reducer that throws
 * on one odd log would block the whole patient's replay.
 */
export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function str(o: Obj, k: string): string | undefined {
  const v = o[k];
  return typeof v === "string" && v.trim() !== "" ? v : undefined;
}

export function num(o: Obj, k: string): number | undefined {
  const v = o[k];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

export function bool(o: Obj, k: string): boolean | undefined {
  const v = o[k];
  return typeof v === "boolean" ? v : undefined;
}

export function obj(o: Obj, k: string): Obj | undefined {
  const v = o[k];
  return isObj(v) ? v : undefined;
}

/** The plain-object items of an array field; anything else in the array is skipped. */
export function objs(o: Obj, k: string): Obj[] {
  const v = o[k];
  return Array.isArray(v) ? v.filter(isObj) : [];
}

export function strs(o: Obj, k: string): string[] | undefined {
  const v = o[k];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined;
}

/** The first string among several field names: for types whose shape the spec leaves open. */
export function firstStr(o: Obj, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = str(o, k);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** Identity form of a free-text name: lowercase, trimmed, inner whitespace collapsed. */
export function normName(s: string): string {
  return s.trim().toLowerCase().replace(/\s+/g, " ");
}

/** A JSON value, or null when absent: state documents spell unknowns as null, never omit. */
export function orNull<T>(v: T | undefined): T | null {
  return v === undefined ? null : v;
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

/** The payload without keys that have their own slot in state (source, extensions, action). */
export function without(o: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
}
