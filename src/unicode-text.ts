/// <reference lib="es2024.string" />

/**
 * Lone UTF-16 surrogates in JSON values. A JSON text may carry `"\ud800"`, an escape of
 * half a character: JSON.parse gives a string that is not Unicode text, JSON.stringify
 * writes the escape back, and ClickHouse refuses the whole insert it arrives in ("missing
 * second part of surrogate pair"). The walks are iterative, so a value nested thousands
 * deep cannot overflow the stack here.
 */

type Path = (string | number)[];

/**
 * An object as JSON.parse makes them. Anything else (a Buffer or a stream a route takes as
 * its raw body) is no JSON value and is not walked: a Buffer's keys are its bytes.
 */
const isJsonObject = (x: object) => {
  const proto: unknown = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
};

/** Whether any string of `v`, or any key of its objects, holds a lone surrogate. */
export function hasLoneSurrogate(v: unknown): boolean {
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === "string") {
      if (!x.isWellFormed()) return true;
    } else if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) stack.push(x[i]);
    } else if (x !== null && typeof x === "object" && isJsonObject(x)) {
      for (const key in x) {
        if (!key.isWellFormed()) return true;
        stack.push((x as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/** Where a lone surrogate was found: the path of the string, and whether it is a key there rather than the value. */
export interface SurrogateAt {
  path: Path;
  inKey: boolean;
  /** The offending string (the key itself when inKey). */
  text: string;
}

/** The first `max` places, in document order (a key before its value), where `v` holds a lone surrogate. */
export function loneSurrogatesIn(v: unknown, max: number): SurrogateAt[] {
  const found: SurrogateAt[] = [];
  // [value, its path, whether the value is the last key of the path (checked, not walked)]
  const stack: [unknown, Path, boolean][] = [[v, [], false]];
  while (stack.length > 0 && found.length < max) {
    const [x, path, isKey] = stack.pop()!;
    if (typeof x === "string") {
      if (!x.isWellFormed()) found.push({ path, inKey: isKey, text: x });
    } else if (Array.isArray(x)) {
      for (let i = x.length - 1; i >= 0; i--) stack.push([x[i], [...path, i], false]);
    } else if (x !== null && typeof x === "object" && isJsonObject(x)) {
      const keys = Object.keys(x);
      for (let i = keys.length - 1; i >= 0; i--) {
        const at = [...path, keys[i]!];
        stack.push([(x as Record<string, unknown>)[keys[i]!], at, false], [keys[i], at, true]);
      }
    }
  }
  return found;
}

/** Where the first lone surrogate of `s` is, as a UTF-16 offset, and its escape (`\ud800`). */
function firstLoneSurrogate(s: string): { offset: number; escape: string } | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    const next = s.charCodeAt(i + 1);
    if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      i++;
      continue;
    }
    return { offset: i, escape: `\\u${c.toString(16)}` };
  }
  return undefined;
}

/**
 * What a validation detail says of a lone surrogate: where in the string it is, and what
 * to send instead.
 */
export function loneSurrogateMessage(s: SurrogateAt): string {
  const lone = firstLoneSurrogate(s.text);
  const what = lone ? `half of a UTF-16 surrogate pair (${lone.escape} at character ${lone.offset})` : "half of a UTF-16 surrogate pair";
  const fix = "send the whole character (both halves of the pair, or the character itself in UTF-8), or remove it";
  return `${s.inKey ? "is a key that is not" : "is not"} valid Unicode text: it holds ${what}; ${fix}`;
}
