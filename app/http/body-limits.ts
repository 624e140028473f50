import { AppError, fieldIssue } from "../../src/errors.js";
import { OVERFLOWING_NUMBER, overflowingNumberPathByShape, readTextShape, type TextShape } from "../../catalog/json-shape.js";

/**
 * Most levels of objects and arrays a JSON request body may nest. Well above what the
 * routes take (a log's payload and metadata nest at most 64 levels, 3 below the body's
 * root), far below what overflows the stack of a recursive reader (a few thousand).
 */
export const MAX_BODY_DEPTH = 128;

/**
 * Most members one object of a JSON request body may have. Far above any object a route
 * reads; parsing and walking an object of hundreds of thousands of keys costs V8 about
 * a microsecond a key per pass (one log whose payload had 900,000 keys took 4.8 s).
 */
export const MAX_BODY_OBJECT_MEMBERS = 10_000;

/** A JSON body text's shape, read before it is parsed, against the body limits. */
export function bodyShape(text: string): TextShape {
  return readTextShape(text, { depth: MAX_BODY_DEPTH, members: MAX_BODY_OBJECT_MEMBERS });
}

/**
 * The 422 for a JSON body text past the shape limits, checked before it is parsed:
 * schema checks, error echoes and serializers recurse, and thousands of levels overflow
 * them. Undefined when the text is within them.
 */
export function bodyShapeError({ over }: TextShape): AppError | undefined {
  if (over === undefined) return undefined;
  const message = over === "depth"
    ? `the JSON body nests objects or arrays more than ${MAX_BODY_DEPTH} levels deep; send at most ${MAX_BODY_DEPTH}`
    : `an object of the JSON body has more than ${MAX_BODY_OBJECT_MEMBERS} members; send at most ${MAX_BODY_OBJECT_MEMBERS} (a list is an array)`;
  const type = over === "depth" ? "too_deep" : "too_many_members";
  return new AppError("validation", `request validation failed: ${message}`, [{ ...fieldIssue(["body"], message), type }]);
}

/**
 * The 422 for a body holding a number too large for a double (`1e400`): JSON.parse reads
 * it as Infinity, which JSON.stringify would then store as null. Located at its field.
 */
export function overflowingNumberError(value: unknown, shape: TextShape): AppError | undefined {
  const path = overflowingNumberPathByShape(value, shape);
  if (path === undefined) return undefined;
  const message = `is ${OVERFLOWING_NUMBER}`;
  return new AppError("validation", `request validation failed: ${["body", ...path].join(".")} ${message}`, [fieldIssue(["body", ...path], message)]);
}

/**
 * A JSON body's value, or the 400 saying where its text stops being JSON: V8 names the
 * character's offset, which in a body of thousands of logs a sender finds by line and column.
 */
export function parseJsonBody(text: string): { value: unknown } | AppError {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const reason = (err as Error).message.replace(/\s*\(line \d+ column \d+\)$/, "");
    const at = /at position (\d+)/.exec(reason)?.[1];
    const offset = at !== undefined ? Number(at) : /end of JSON input/.test(reason) ? text.length : undefined;
    const message = offset === undefined
      ? `malformed JSON body: ${reason}`
      : `malformed JSON body: ${reason} (${lineAndColumn(text, offset)}${offset >= text.length ? ", where the body ends: is it cut short?" : ""})`;
    return new AppError("bad_request", message, [{ type: "bad_request", message }]);
  }
}

function lineAndColumn(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A JSON body's text, or why it has none: JSON travels as UTF-8 (RFC 8259), so a body
 * declaring another charset is 415, and bytes that are not UTF-8 are 400 rather than
 * stored with U+FFFD in place of what the sender meant. A leading BOM is dropped.
 */
export function jsonBodyText(contentType: string | undefined, body: Buffer): string | AppError {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return new AppError("unsupported_media_type", `JSON bodies are UTF-8, and this one says charset=${charset}: send it encoded as UTF-8, with charset=utf-8 or no charset`);
  }
  try {
    return utf8.decode(body);
  } catch {
    return new AppError("bad_request", "the body is not valid UTF-8: JSON is sent as UTF-8 (RFC 8259); encode the text as UTF-8");
  }
}
