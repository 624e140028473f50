import { Ajv, type Options } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifySchema, FastifySchemaCompiler } from "fastify";

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false };

/**
 * Bodies are validated strictly (42 is not a string), while query strings and path
 * parameters, which arrive as text, are coerced (`?limit=10` is a number).
 */
export function createValidatorCompiler(shared: unknown[]): FastifySchemaCompiler<FastifySchema> {
  const strict = addFormats(new Ajv({ ...base, coerceTypes: false }));
  const coercing = addFormats(new Ajv({ ...base, coerceTypes: "array" }));
  for (const s of shared) {
    strict.addSchema(s as object);
    coercing.addSchema(s as object);
  }
  return ({ schema, httpPart }) => (httpPart === "body" ? strict : coercing).compile(schema as object) as ReturnType<FastifySchemaCompiler<FastifySchema>>;
}
