/**
 * Bounded measures of JSON values and texts. Each is iterative and stops as soon as it
 * knows the answer, so a hostile value (thousands of levels deep, millions of items) costs
 * no more than the limit asked about: JSON.stringify, schema checks and the fold recurse,
 * and a body of a few thousand levels (well inside the size limit) overflows their stack.
 */

/**
 * `v` as String() writes it when it is no object (a string, number, boolean, bigint,
 * symbol, function or undefined); undefined for an object or null.
 */
export function scalarText(v: unknown): string | undefined {
  switch (typeof v) {
    case "string":
      return v;
    case "number": case "boolean": case "bigint": case "symbol": case "function": case "undefined":
      return String(v);
    default:
      return undefined;
  }
}

/** Whether `v` nests objects or arrays more than `limit` deep. */
export function nestedDeeperThan(v: unknown, limit: number): boolean {
  if (v === null || typeof v !== "object") return false;
  // Two stacks rather than one of pairs: a log of 200,000 small objects is walked on every write.
  const values: object[] = [v];
  const depths: number[] = [0];
  while (values.length > 0) {
    const x = values.pop()!;
    const depth = depths.pop()!;
    if (depth >= limit) return true;
    const children: unknown[] = Array.isArray(x) ? x : Object.values(x);
    for (const child of children) {
      if (child !== null && typeof child === "object") {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACE = 123;
const OPEN_BRACKET = 91;
const CLOSE_BRACE = 125;
const CLOSE_BRACKET = 93;
const COMMA = 44;

/** Limits on the shape of a JSON text, checked before it is parsed. */
export interface TextLimits {
  /** Most levels of objects and arrays inside one another. */
  depth: number;
  /** Most members of one object, at least 1 (arrays are not counted: lists have their own limits). */
  members: number;
}

/**
 * Which limit the JSON text `json` passes first, read before parsing, or undefined.
 * Strings are skipped with indexOf (most of a body's bytes are in strings), so a 3.5 MB
 * batch of 10,000 logs takes about a quarter of its JSON.parse. Text that is not JSON
 * gets some answer; JSON.parse refuses it after.
 */
export function textOverLimits(json: string, limits: TextLimits): "depth" | "members" | undefined {
  let depth = 0;
  // Per open level: whether it is an object, and the commas seen in it (its members - 1).
  const inObject: boolean[] = [false];
  const commas: number[] = [0];
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      // The closing quote is the next one not escaped by an odd run of backslashes.
      for (;;) {
        i = json.indexOf('"', i + 1);
        if (i < 0) return undefined;
        let b = i - 1;
        while (json.charCodeAt(b) === BACKSLASH) b--;
        if ((i - 1 - b) % 2 === 0) break;
      }
    } else if (c === COMMA) {
      if (inObject[depth] && ++commas[depth]! >= limits.members) return "members";
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limits.depth) return "depth";
      inObject[depth] = c === OPEN_BRACE;
      commas[depth] = 0;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) depth--;
  }
  return undefined;
}

/** Whether the JSON text `json` opens more than `limit` objects or arrays inside one another (see textOverLimits). */
export function textNestsDeeperThan(json: string, limit: number): boolean {
  // Each level takes an opening and a closing character.
  return json.length > 2 * limit && textOverLimits(json, { depth: limit, members: Infinity }) === "depth";
}

/**
 * Whether `v` holds more than `limit` values (objects, arrays and scalars, itself
 * included). Stops counting past the limit, so it costs at most `limit` steps.
 */
export function moreValuesThan(v: unknown, limit: number): boolean {
  let count = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (++count > limit) return true;
    if (x === null || typeof x !== "object") continue;
    if (Array.isArray(x)) {
      if (count + stack.length + x.length > limit) return true;
      for (const child of x) stack.push(child);
    } else {
      for (const key in x) {
        if (count + stack.length >= limit) return true;
        stack.push((x as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/**
 * The length of `v` as JSON text when it is at most `limit`, else undefined. Stops past
 * the limit, so measuring a value of megabytes costs at most `limit` steps. Strings count
 * with their escapes, as JSON.stringify writes them.
 */
export function jsonLengthUpTo(v: unknown, limit: number): number | undefined {
  let total = 0;
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === "string") total += x.length > limit ? x.length : JSON.stringify(x).length;
    else if (x === null || typeof x !== "object") total += (scalarText(x ?? null) ?? "null").length;
    else if (Array.isArray(x)) {
      // Brackets and the commas between items.
      total += 2 + Math.max(0, x.length - 1);
      if (total > limit) return undefined;
      for (const child of x) stack.push(child === undefined ? null : child);
    } else {
      total += 2;
      let first = true;
      for (const key in x) {
        const child = (x as Record<string, unknown>)[key];
        if (child === undefined) continue;
        // "key": and the comma before every member but the first.
        total += (key.length > limit ? key.length : JSON.stringify(key).length) + 1 + (first ? 0 : 1);
        first = false;
        if (total > limit) return undefined;
        stack.push(child);
      }
    }
    if (total > limit) return undefined;
  }
  return total;
}

/**
 * A number literal JSON.parse reads as Infinity: an exponent of three digits or more, or
 * 300 digits in a row. A cheap test of the text (it may match inside a string, which the
 * walk of the parsed value then clears), so ordinary texts are never walked.
 */
const MAYBE_OVERFLOWING = /\d[eE]\+?\d{3}|\d{300}/;

/** What to tell a sender of such a number. */
export const OVERFLOWING_NUMBER = "a number too large to represent (it would read as infinity): send a finite number";

/**
 * Where `value`, parsed from the JSON text `text`, holds a number too large for a double
 * (`1e400` parses as Infinity, which JSON.stringify turns into null), or undefined.
 */
export function overflowingNumberPath(text: string, value: unknown): (string | number)[] | undefined {
  return MAYBE_OVERFLOWING.test(text) ? nonFinitePath(value, []) : undefined;
}

function nonFinitePath(v: unknown, at: (string | number)[]): (string | number)[] | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? undefined : at;
  if (v === null || typeof v !== "object") return undefined;
  const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  for (const [k, x] of entries) {
    const found = nonFinitePath(x, [...at, k]);
    if (found) return found;
  }
  return undefined;
}
