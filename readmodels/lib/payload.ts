/**
 * Reading payloads. A reducer gets its log's payload typed by the catalog's schema
 * (`LogPayloads`), and reads each field through one guard below: `text(r.unit)`,
 * `finite(r.value_numeric)`, `items(p.results)`. The type says what today's catalog
 * accepts, but a log stored under an older catalog (or before a schema tightened) may hold
 * another shape there, and a reducer that throws on one odd log blocks the patient's whole
 * replay. So a guard returns the value when it has the type's shape, and reads anything
 * else as absent. `text` also reads a blank string as absent: an empty name carries nothing.
 *
 * Fields the catalog does not name (objects are open, so a client's extra fields are kept)
 * are read with the key accessors further down, `str(o, "key")`: a reader using one says
 * which field it is and why it reads it.
 */
export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Array.isArray that keeps the item type (it narrows a readonly T[] to any[]). */
const isList = <T>(v: readonly T[] | null | undefined): v is readonly T[] => Array.isArray(v);

const asText = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined);
const asNumber = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const asBoolean = (v: unknown): boolean | undefined => (typeof v === "boolean" ? v : undefined);
const asStrings = (v: unknown): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : undefined);

/** A string with some non-blank character, else undefined. */
export const text: (v: string | null | undefined) => string | undefined = asText;

/** A finite number, else undefined. */
export const finite: (v: number | null | undefined) => number | undefined = asNumber;

/** A boolean, else undefined. */
export const truth: (v: boolean | null | undefined) => boolean | undefined = asBoolean;

/** The strings of a list, else undefined when it is not a list. */
export const texts: (v: readonly string[] | null | undefined) => string[] | undefined = asStrings;

/** One of `values`, else undefined. */
export function oneOf<V extends string>(v: string | null | undefined, values: readonly V[]): V | undefined {
  return typeof v === "string" && (values as readonly string[]).includes(v) ? (v as V) : undefined;
}

/** A plain object (not null, not an array), else undefined. */
export function record<T extends object>(v: T | null | undefined): T | undefined {
  return isObj(v) ? v : undefined;
}

/**
 * The plain-object items of a list, else an empty list; anything else in it is skipped.
 * The list itself when every item is one (the usual case, which then allocates nothing).
 */
export function items<T extends object>(v: readonly T[] | null | undefined): readonly T[] {
  if (!isList(v)) return [];
  for (const x of v) if (!isObj(x)) return v.filter((y): y is T => isObj(y));
  return v;
}

// Key accessors: for fields the catalog does not name, and the types the spec leaves open.

/** A field as sent, whatever it holds. */
export const extra = (o: object, k: string): unknown => (o as Obj)[k];

export const str = (o: Obj, k: string): string | undefined => asText(o[k]);
export const num = (o: Obj, k: string): number | undefined => asNumber(o[k]);
export const bool = (o: Obj, k: string): boolean | undefined => asBoolean(o[k]);
export const strs = (o: Obj, k: string): string[] | undefined => asStrings(o[k]);

export function obj(o: Obj, k: string): Obj | undefined {
  const v = o[k];
  return isObj(v) ? v : undefined;
}

/** The plain-object items of an array field; anything else in the array is skipped. */
export function objs(o: Obj, k: string): Obj[] {
  const v = o[k];
  return Array.isArray(v) ? v.filter(isObj) : [];
}

/** The first string among several field names: for types whose shape the spec leaves open. */
export function firstStr(o: Obj, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = str(o, k);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * Identity form of a free-text name: lowercase, trimmed, inner whitespace collapsed. Stored
 * entries keep fields as a log sent them, so a name read back may be anything: what is not
 * text names nothing ("").
 */
export function normName(s: string | null | undefined): string {
  return typeof s === "string" ? s.trim().toLowerCase().replace(/\s+/g, " ") : "";
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
