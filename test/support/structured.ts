import { Ajv, type ValidateFunction } from "ajv";
import { expect } from "vitest";
import { toJsonSchemaCompat } from "@modelcontextprotocol/sdk/server/zod-json-schema-compat.js";
import { TOOLS } from "../../app/mcp/tools/index.js";

/**
 * Checks of MCP structured output: a tool's structuredContent is the JSON its text holds
 * and fits its outputSchema, closed (see `closed`).
 */

type Schema = Record<string, unknown>;

/** A tool's outputSchema as tools/list publishes it (the SDK's own conversion of the tool's zod schema). */
export function outputSchemaOf(name: string): Schema {
  const tool = TOOLS.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return toJsonSchemaCompat(tool.output, { strictUnions: true, pipeStrategy: "output" });
}

/**
 * The schema with every object that names its properties closed to any other. The
 * published schemas leave objects open (app/mcp/tools/output.ts), so that a field added
 * later does not make a validating client refuse answers; closed, they must still name
 * every field an answer carries. Objects naming none (payloads, records) stay open.
 */
export function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    out[k] = k === "properties" ? Object.fromEntries(Object.entries(v as Schema).map(([p, s]) => [p, closed(s)])) : closed(v);
  }
  if (out.type === "object" && out.properties && Object.keys(out.properties).length > 0) out.additionalProperties = false;
  return out;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const validators = new Map<string, ValidateFunction>();

/** Ajv's check of a tool's closed outputSchema, compiled once per tool. */
export function closedValidator(name: string): ValidateFunction {
  let v = validators.get(name);
  if (!v) validators.set(name, (v = ajv.compile(closed(outputSchemaOf(name)) as Schema)));
  return v;
}

interface Result {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
}

/**
 * A tool error carries no structuredContent; any other answer carries it, equal to its
 * JSON text (a markdown view: the document as `markdown`), and it fits the closed schema.
 */
export function expectStructured(name: string, r: Result): void {
  const text = r.content[0]!.text;
  if (r.isError === true) {
    expect(r.structuredContent, `${name}: an error has no structuredContent`).toBeUndefined();
    return;
  }
  expect(r.structuredContent, `${name}: structuredContent`).toBeDefined();
  if (r.structuredContent!.format === "markdown") expect(r.structuredContent!.markdown).toBe(text);
  else expect(r.structuredContent).toEqual(JSON.parse(text));
  const validate = closedValidator(name);
  expect(validate(r.structuredContent), `${name}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}
