import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifySchema, FastifySchemaCompiler } from "fastify";
import { moreValuesThan } from "../../catalog/json-shape.js";

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// strictNumbers: `1e400` in JSON reads as Infinity, which ajv otherwise takes for an integer.
const base: Options = { removeAdditional: false, useDefaults: true, strict: false, strictNumbers: true };

/**
 * Inputs holding more values than this get their first schema problem reported, not every
 * one. ajv's allErrors mode has no cap: it builds an error per problem, five or more per
 * item of a wrong list (a 3 MB array took 4.6 s and 1.3 GB), so it runs only on inputs
 * small enough that every problem is cheap to find.
 */
export const ALL_PROBLEMS_MAX_VALUES = 2_000;

/** The keyword of the marker issue saying only the first problem was looked for (the error handler reads it). */
export const FIRST_PROBLEM_ONLY = "firstProblemOnly";

const firstOnlyMarker: ErrorObject = {
  keyword: FIRST_PROBLEM_ONLY,
  instancePath: "",
  schemaPath: "",
  params: {},
  message: "only the first problem of an input this large is reported",
};

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * Where a coerced query string or path holds a number that is not finite: coercion reads
 * `?page=1e400` as Infinity after strictNumbers has looked, and the handler answered 500.
 * These parts are flat (values, or lists of values).
 */
function nonFinite(data: unknown): ErrorObject | undefined {
  if (data === null || typeof data !== "object") return undefined;
  for (const [key, v] of Object.entries(data)) {
    const list: unknown[] = Array.isArray(v) ? v : [v];
    const at = list.findIndex((x) => typeof x === "number" && !Number.isFinite(x));
    if (at < 0) continue;
    const instancePath = `/${key.replace(/~/g, "~0").replace(/\//g, "~1")}${Array.isArray(v) ? `/${at}` : ""}`;
    return { keyword: "type", instancePath, schemaPath: "", params: { type: "number" }, message: "must be a finite number" };
  }
  return undefined;
}

/**
 * Checks with a validator that stops at the first problem (every valid input, the hot
 * path, costs only that); on a failure, finds every problem of a small input again with
 * allErrors, compiled on first need.
 */
function bounded(first: ValidateFunction, all: () => ValidateFunction, coerced: boolean): Validate {
  const validate: Validate = (data) => {
    if (first(data)) {
      const infinite = coerced ? nonFinite(data) : undefined;
      validate.errors = infinite ? [infinite] : null;
      return infinite === undefined;
    }
    const every = moreValuesThan(data, ALL_PROBLEMS_MAX_VALUES) ? undefined : all();
    validate.errors = every !== undefined && !every(data) && every.errors ? every.errors : [...(first.errors ?? []), firstOnlyMarker];
    return false;
  };
  return validate;
}

/**
 * Bodies are validated strictly (42 is not a string), while query strings and path
 * parameters, which arrive as text, are coerced (`?limit=10` is a number).
 */
export function createValidatorCompiler(shared: unknown[]): FastifySchemaCompiler<FastifySchema> {
  const make = (allErrors: boolean, coerceTypes: false | "array") => {
    const ajv = addFormats(new Ajv({ ...base, allErrors, coerceTypes }));
    for (const s of shared) ajv.addSchema(s as object);
    return ajv;
  };
  const strict = { first: make(false, false), all: make(true, false) };
  const coercing = { first: make(false, "array"), all: make(true, "array") };
  return ({ schema, httpPart }) => {
    const pair = httpPart === "body" ? strict : coercing;
    let every: ValidateFunction | undefined;
    const compiled = bounded(pair.first.compile(schema as object), () => (every ??= pair.all.compile(schema as object)), pair === coercing);
    return compiled as ReturnType<FastifySchemaCompiler<FastifySchema>>;
  };
}
