import { jsonLengthUpTo } from "./json-shape.js";

/**
 * The spec's validation item (`field`, `location` from the request root, `input_value`)
 * and how a failing value is echoed in it: the shape every layer reports problems in, the
 * catalog's payload checks, the query compiler and the HTTP app alike.
 */
export interface ErrorDetail {
  type: string;
  message: string;
  field?: string;
  location?: (string | number)[];
  input_value?: unknown;
  [extra: string]: unknown;
}

/** Most bytes of a value an error echoes as input_value; a larger one is described instead. */
const MAX_ECHO_BYTES = 2048;

/** Longest key of a location or field kept whole; a longer one (a hostile field name) is shortened. */
const MAX_KEY_CHARS = 128;

/**
 * The failing value as an error echoes it: a 5,001-log batch over the limit would
 * otherwise come back whole (megabytes), so a large array, object or string is named
 * by its size instead. Measuring stops past the limit, so echoing a value of megabytes,
 * or one nested thousands deep, costs no more than echoing a small one.
 */
export function echoValue(v: unknown): unknown {
  if (v === null || typeof v !== "object") {
    return typeof v === "string" && v.length > MAX_ECHO_BYTES ? `${v.slice(0, 200)}… (${v.length} characters)` : v;
  }
  if (jsonLengthUpTo(v, MAX_ECHO_BYTES) !== undefined) return v;
  return Array.isArray(v) ? `(an array of ${v.length} items, over ${MAX_ECHO_BYTES} bytes as JSON)` : `(an object of over ${MAX_ECHO_BYTES} bytes as JSON)`;
}

/**
 * What a detail echoes for `field` of `parent`: its value, or, when it is missing, the
 * object that lacks it, as pydantic (and so the hosted product) does.
 */
export function echoField(parent: unknown, field: string | number): unknown {
  const has = parent !== null && typeof parent === "object" && Object.hasOwn(parent, field);
  return echoValue(has ? (parent as Record<string | number, unknown>)[field] : parent);
}

/** A client's text as a message quotes it: a hostile one of megabytes is cut to its first 100 characters. */
export function shortened(text: string): string {
  return text.length > MAX_KEY_CHARS ? `${text.slice(0, 100)}… (${text.length} characters)` : text;
}

/** A validation detail for one field, located from the request root (e.g. ["body","logs",3,"payload","score"]). */
export function fieldIssue(location: (string | number)[], message: string, input_value?: unknown): ErrorDetail {
  const at = location.map((p) => (typeof p === "string" ? shortened(p) : p));
  const field = at.filter((p) => p !== "body" && p !== "query" && p !== "params").join(".");
  return { type: "value_error", message, field, location: at, input_value: echoValue(input_value) };
}

