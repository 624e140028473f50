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
const ZERO = 48;
const NINE = 57;
const DOT = 46;
const PLUS = 43;
const MINUS = 45;
const LOWER_E = 101;
const UPPER_E = 69;

/** Limits on the shape of a JSON text, checked before it is parsed. */
export interface TextLimits {
  /** Most levels of objects and arrays inside one another. */
  depth: number;
  /** Most members of one object, at least 1 (arrays are not counted: lists have their own limits). */
  members: number;
}

/** What one pass over a JSON text found, before it is parsed. */
export interface TextShape {
  /** The first limit the text passes, or undefined. */
  over: "depth" | "members" | undefined;
  /**
   * Whether a number literal may be too large for a double (JSON.parse reads it as
   * Infinity): at least 300 digits before its point, counting a positive exponent, or an
   * exponent of three digits. Only then is the parsed value walked to find it.
   */
  mayOverflow: boolean;
}

/** Digits a double's integer part can have, with margin: 1.8e308 is the largest (309 digits). */
const SAFE_MAGNITUDE = 300;

const isDigit = (c: number) => c >= ZERO && c <= NINE;

/**
 * The shape of the JSON text `json` as far as `limits` ask, in one pass: strings are
 * skipped with indexOf (most of a body's bytes are in strings), so a 3.5 MB batch of
 * 10,000 logs takes about a quarter of its JSON.parse. Text that is not JSON gets some
 * answer; JSON.parse refuses it after.
 */
export function readTextShape(json: string, limits: TextLimits): TextShape {
  let depth = 0;
  let mayOverflow = false;
  // Per open level: whether it is an object, and the commas seen in it (its members - 1).
  const inObject: boolean[] = [false];
  const commas: number[] = [0];
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      // The closing quote is the next one not escaped by an odd run of backslashes.
      for (;;) {
        i = json.indexOf('"', i + 1);
        if (i < 0) return { over: undefined, mayOverflow };
        let b = i - 1;
        while (json.charCodeAt(b) === BACKSLASH) b--;
        if ((i - 1 - b) % 2 === 0) break;
      }
    } else if (isDigit(c)) {
      // A number: its integer digits, then past any fraction, its exponent.
      const start = i;
      while (isDigit(json.charCodeAt(i + 1))) i++;
      let magnitude = i + 1 - start;
      while (json.charCodeAt(i + 1) === DOT || isDigit(json.charCodeAt(i + 1))) i++;
      const e = json.charCodeAt(i + 1);
      if (e === LOWER_E || e === UPPER_E) {
        i++;
        const sign = json.charCodeAt(i + 1);
        if (sign === PLUS || sign === MINUS) i++;
        const expStart = i + 1;
        while (isDigit(json.charCodeAt(i + 1))) i++;
        const digits = i + 1 - expStart;
        const exponent = digits > 6 ? Infinity : Number(json.slice(expStart, i + 1) || "0");
        magnitude = sign === MINUS ? magnitude - exponent : magnitude + exponent;
        if (sign !== MINUS && digits >= 3) magnitude = Infinity;
      }
      if (magnitude >= SAFE_MAGNITUDE) mayOverflow = true;
    } else if (c === COMMA) {
      if (inObject[depth] && ++commas[depth]! >= limits.members) return { over: "members", mayOverflow };
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limits.depth) return { over: "depth", mayOverflow };
      inObject[depth] = c === OPEN_BRACE;
      commas[depth] = 0;
    } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && depth > 0) depth--;
  }
  return { over: undefined, mayOverflow };
}

/** Which limit the JSON text `json` passes first, read before parsing, or undefined (see readTextShape). */
export function textOverLimits(json: string, limits: TextLimits): "depth" | "members" | undefined {
  return readTextShape(json, limits).over;
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

/** What to tell a sender of such a number. */
export const OVERFLOWING_NUMBER = "a number too large to represent (it would read as infinity): send a finite number";

/**
 * Where `value`, parsed from the JSON text `text`, holds a number too large for a double
 * (`1e400` parses as Infinity, which JSON.stringify turns into null), or undefined.
 */
export function overflowingNumberPath(text: string, value: unknown): (string | number)[] | undefined {
  return overflowingNumberPathByShape(value, readTextShape(text, { depth: Infinity, members: Infinity }));
}

/** The same, for a caller that has read the text's shape already: the value is walked only when the text may hold such a number. */
export function overflowingNumberPathByShape(value: unknown, shape: TextShape): (string | number)[] | undefined {
  return shape.mayOverflow ? nonFinitePath(value, []) : undefined;
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
