import { fieldIssue, type ErrorDetail } from "../catalog/validation-item.js";
import type { CompileLimits } from "./types.js";

/** Placeholder types the compiler emits; a closed list so no type text comes from the body. */
export type ParamType = "String" | "Float64" | "Bool" | "Int64" | "UInt32" | "Array(String)" | "Array(Float64)" | "Array(Int64)";

/** A payload path segment: an object key, or a 0-based array index as the client writes it. */
export type PathSeg = string | number;

/** The lambda argument of an array select: one element (its raw JSON text) of the selected array. */
export const ELEMENT = "el";

/** JSON text a path is read from: the log's payload column, or an array element (ELEMENT). */
export type JsonDoc = "payload" | typeof ELEMENT;

/**
 * An object key in a payload path. It is the one piece of body text that reaches SQL, as a
 * backquoted identifier of the JSON column: letters, digits and _ only, so it can neither
 * close the quotes nor name anything but a subcolumn.
 */
export const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Stop collecting after this many problems: a hostile body could otherwise make a huge answer. */
const MAX_ISSUES = 50;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Shortens a body string quoted in a message, so a megabyte-long field name stays out of logs. */
export function quote(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}

const unsafeInteger = (v: unknown) => typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v);

/**
 * A Float64 parameter holding an integer beyond 2^53 (1e21, say) as its decimal text:
 * chdb's binder refuses such numbers, and both chdb and the HTTP interface read the text
 * of a parameter as the value (a list as `[1e+21,5]`). Everything else is bound as is.
 */
function floatParam(type: ParamType, value: unknown): unknown {
  if (type === "Float64" && unsafeInteger(value)) return String(value);
  if (type === "Array(Float64)" && Array.isArray(value) && value.some(unsafeInteger)) return `[${value.map(String).join(",")}]`;
  return value;
}

/**
 * One compilation: the problems found so far and the bound parameters. Validation and
 * SQL generation happen in the same walk; nothing is returned while `issues` is non-empty.
 */
export class Ctx {
  readonly issues: ErrorDetail[] = [];
  readonly params: Record<string, unknown> = {};
  /** Leaf conditions compiled so far, in filter and array selects' where (the maxConditions budget). */
  conditions = 0;
  private nextValue = 0;
  private nextKey = 0;
  private readonly paths = new Map<string, string>();

  constructor(readonly limits: CompileLimits) {}

  /** Records a problem located under the body; returns undefined so callers can `return ctx.fail(…)`. */
  fail(location: (string | number)[], message: string, input?: unknown): undefined {
    if (this.issues.length < MAX_ISSUES) this.issues.push(fieldIssue(["body", ...location], message, input));
    return undefined;
  }

  /** Binds a body value as a fresh parameter `p{n}` and returns its placeholder. */
  bind(type: ParamType, value: unknown): string {
    return this.named(`p${this.nextValue++}`, type, floatParam(type, value));
  }

  /** Binds under a fixed name (scope, limit, offset): names the body cannot choose or collide with. */
  named(name: string, type: ParamType, value: unknown): string {
    this.params[name] = value;
    return `{${name}:${type}}`;
  }

  /**
   * `` payload_json.`a`.`b` ``: a path of object keys as a subcolumn of the JSON column
   * (migration 2), or undefined when the path holds an array index (those are read from the
   * text with JSONExtract and bound segments, `jsonArgs`). Each key is checked against KEY
   * again here, where it is written, so no other text can ever be quoted into SQL.
   */
  jsonColumn(path: PathSeg[]): string | undefined {
    if (path.length === 0 || path.some((seg) => typeof seg === "number")) return undefined;
    return `payload_json.${path.map((seg) => {
      if (typeof seg !== "string" || !KEY.test(seg)) throw new Error(`refusing to write path key ${JSON.stringify(seg)} into SQL`);
      return `\`${seg}\``;
    }).join(".")}`;
  }

  /**
   * `payload, {k0:String}, {k1:Int64}`: the JSON path arguments of JSONExtract*, each segment
   * a parameter. ClickHouse JSON array indexes are 1-based (negative counts from the end),
   * clients send 0-based ones, so index i is bound as i + 1. The same path reuses its keys.
   * `doc` is the JSON text read: the log's payload, or the array element an array select
   * is testing (ELEMENT, the lambda's argument); both are names the compiler writes.
   */
  jsonArgs(path: PathSeg[], doc: JsonDoc = "payload"): string {
    const id = `${doc}:${path.join(".")}`;
    let args = this.paths.get(id);
    if (args === undefined) {
      const parts = path.map((seg) => (typeof seg === "number" ? this.named(`k${this.nextKey++}`, "Int64", seg + 1) : this.named(`k${this.nextKey++}`, "String", seg)));
      args = [doc, ...parts].join(", ");
      this.paths.set(id, args);
    }
    return args;
  }
}
