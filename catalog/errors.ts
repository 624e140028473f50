/**
 * Turns TypeBox's value errors into PayloadIssues a person can act on: the path split
 * from the JSON pointer, one issue per path, and messages that say what was expected.
 * Runs only when a payload has already failed, so clarity beats speed here, but the work
 * stays bounded by the issues reported (MAX_ISSUES): errors are read lazily.
 */
import { Kind, OptionalKind, type TSchema } from "@sinclair/typebox";
import { ValueErrorType, type ValueError } from "@sinclair/typebox/errors";
import { echoField, echoValue } from "./validation-item.js";
import type { PayloadIssue } from "./issues.js";
import { ANY_DAY_FORM, PATTERN_MEANING } from "./schemas/common.js";

export const MAX_ISSUES = 20;

// A variant failing with one of these at the union's own path did not match the value's
// kind at all; a variant failing any other way (a range, a nested field) is the one the
// client meant, and its errors are the specific ones.
const KIND_MISMATCH = new Set<ValueErrorType>([
  ValueErrorType.Array, ValueErrorType.Boolean, ValueErrorType.Integer, ValueErrorType.Literal, ValueErrorType.Null,
  ValueErrorType.Number, ValueErrorType.Object, ValueErrorType.String, ValueErrorType.Union,
]);

const KIND_NAME: Readonly<Record<string, string>> = {
  Number: "a number", Integer: "an integer", String: "a string", Boolean: "a boolean", Null: "null",
  Object: "an object", Record: "an object", Array: "an array",
};

function kindName(schema: TSchema): string {
  if (schema[Kind] === "Literal") return JSON.stringify(schema.const);
  return KIND_NAME[schema[Kind]] ?? "a valid value";
}

function variantsOf(schema: TSchema): TSchema[] {
  return schema[Kind] === "Union" ? (schema.anyOf as TSchema[]).flatMap(variantsOf) : [schema];
}

function describeUnion(schema: TSchema): string {
  const variants = variantsOf(schema);
  const literals = variants.filter((v) => v[Kind] === "Literal").map((v) => String(v.const));
  const others = variants.filter((v) => v[Kind] !== "Literal").map(kindName);
  if (literals.length > 0 && others.every((o) => o === "null")) {
    return `must be one of ${literals.join(", ")}${others.length > 0 ? " or null" : ""}`;
  }
  const names = [...literals.map((l) => JSON.stringify(l)), ...others];
  return `must be ${names.slice(0, -1).join(", ")}${names.length > 1 ? " or " : ""}${names[names.length - 1]}`;
}

function describeRange(schema: TSchema): string {
  // The bounds of a number or integer schema (TSchema types its keywords `any`).
  const lo = (schema.minimum ?? schema.exclusiveMinimum) as number | undefined;
  const hi = (schema.maximum ?? schema.exclusiveMaximum) as number | undefined;
  const exclusive = schema.exclusiveMinimum !== undefined || schema.exclusiveMaximum !== undefined;
  if (lo !== undefined && hi !== undefined) return `must be between ${lo} and ${hi}${exclusive ? " (exclusive)" : ""}`;
  if (lo !== undefined) return schema.minimum !== undefined ? `must be at least ${lo}` : `must be greater than ${lo}`;
  return schema.maximum !== undefined ? `must be at most ${hi}` : `must be less than ${hi}`;
}

/** What to do instead of sending null: an optional field's schema carries TypeBox's Optional mark. */
function nullHint(s: TSchema, listItem: boolean): string {
  if (listItem) return "; a list holds no null items: leave the item out of the list";
  return (s as { [OptionalKind]?: string })[OptionalKind] === "Optional"
    ? "; omit the field when the value is unknown instead of sending null"
    : "; it is required, so send its value (null is not one)";
}

function messageFor(e: ValueError): string {
  const isField = e.path !== "";
  const s = e.schema;
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return "is required";
    case ValueErrorType.Union:
      return describeUnion(s);
    case ValueErrorType.Literal:
      return `must be ${JSON.stringify(s.const)}`;
    case ValueErrorType.Number: case ValueErrorType.Integer: case ValueErrorType.String: case ValueErrorType.Boolean:
    case ValueErrorType.Object: case ValueErrorType.Array: case ValueErrorType.Null:
      // A typed field sent as null is the usual "unknown" placeholder: say how to express
      // unknown where the field may be left out, and that it may not where it is required.
      return `must be ${kindName(s)}${isField && e.value === null ? nullHint(s, /\/\d+$/.test(e.path)) : ""}`;
    case ValueErrorType.NumberMinimum: case ValueErrorType.NumberMaximum: case ValueErrorType.NumberExclusiveMinimum:
    case ValueErrorType.NumberExclusiveMaximum: case ValueErrorType.IntegerMinimum: case ValueErrorType.IntegerMaximum:
    case ValueErrorType.IntegerExclusiveMinimum: case ValueErrorType.IntegerExclusiveMaximum:
      return describeRange(s);
    case ValueErrorType.StringMinLength:
      return s.minLength === 1 ? "must not be empty" : `must be at least ${s.minLength} characters`;
    case ValueErrorType.StringMaxLength:
      return `must be at most ${s.maxLength} characters`;
    case ValueErrorType.StringPattern:
      if (ANY_DAY_FORM[s.pattern as string]?.test(e.value as string)) {
        return `must be a real calendar date: ${(e.value as string).slice(0, 10)} does not exist`;
      }
      return `must be ${PATTERN_MEANING[s.pattern as string] ?? `a string matching ${s.pattern}`}`;
    case ValueErrorType.ArrayMinItems:
      return `must have at least ${s.minItems} item${s.minItems === 1 ? "" : "s"}`;
    case ValueErrorType.ArrayMaxItems:
      return `must have at most ${s.maxItems} item${s.maxItems === 1 ? "" : "s"}`;
    default:
      return e.message;
  }
}

/**
 * The errors of the variant the client meant, still lazy: its first error decides, and
 * the rest is read only as far as the issues wanted (a variant failing on each of a
 * hundred thousand items would otherwise be listed whole).
 */
function specificVariant(e: ValueError): Iterable<ValueError> | undefined {
  for (const variant of e.errors) {
    const rest = variant[Symbol.iterator]();
    const first = rest.next();
    if (!first.done && !(first.value.path === e.path && KIND_MISMATCH.has(first.value.type))) {
      return (function* () {
        yield first.value;
        yield* { [Symbol.iterator]: () => rest };
      })();
    }
  }
  return undefined;
}

function* flatten(errors: Iterable<ValueError>): Generator<ValueError> {
  for (const e of errors) {
    const specific = e.type === ValueErrorType.Union ? specificVariant(e) : undefined;
    if (specific !== undefined) yield* flatten(specific);
    else yield e;
  }
}

/** Splits a JSON pointer, turning segments that index arrays of the payload into numbers. */
export function pointerToPath(pointer: string, root: unknown): (string | number)[] {
  if (pointer === "") return [];
  const out: (string | number)[] = [];
  let node: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node) && /^\d+$/.test(key)) {
      out.push(Number(key));
      node = node[Number(key)];
    } else {
      out.push(key);
      node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
    }
  }
  return out;
}

/**
 * The value an issue echoes as input_value. A missing field has none, so, as pydantic
 * (and so the hosted product) does, it echoes the object that lacks the field as sent.
 */
export function echoIssue(found: PayloadIssue, payload: unknown): PayloadIssue {
  if (found.value !== undefined || found.path.length === 0) return { ...found, value: echoValue(found.value) };
  let parent: unknown = payload;
  for (const key of found.path.slice(0, -1)) {
    parent = parent !== null && typeof parent === "object" ? (parent as Record<string | number, unknown>)[key] : undefined;
  }
  return { ...found, value: echoField(parent, found.path[found.path.length - 1]!) };
}

export function toIssues(errors: Iterable<ValueError>, payload: unknown): PayloadIssue[] {
  const seen = new Set<string>();
  const out: PayloadIssue[] = [];
  for (const e of flatten(errors)) {
    if (seen.has(e.path)) continue;
    seen.add(e.path);
    out.push({ path: pointerToPath(e.path, payload), message: messageFor(e), value: e.value });
    if (out.length >= MAX_ISSUES) break;
  }
  return out;
}
