import { z } from "zod";
import { Type, type TSchema } from "@sinclair/typebox";
import { HorizonAnswer } from "../../http/routes/state/schemas.js";

/**
 * The pieces of the tools' outputSchemas (MCP structured output). A tool that answers
 * a REST twin's document derives its schema from that route's TypeBox schema, so the
 * wire shape has one source; what only MCP adds (size marks, filters) is written here.
 *
 * Objects are left open to fields they do not name (JSON Schema's default, and the REST
 * schemas'): a client validating structuredContent, as the SDK's does, would refuse a
 * whole answer over a field added later. The tests close every object that names its
 * fields, so the schemas still have to name all a tool sends.
 */

/**
 * A TypeBox schema (JSON Schema) as zod. The JSON round trip drops TypeBox's symbol
 * keys, which zod's reader does not know. Descriptions are dropped unless asked for: the
 * tool's description already says what its answer holds, and tools/list is read by a model.
 */
export function fromTypeBox(schema: TSchema, keep: { descriptions?: boolean } = {}): z.ZodObject {
  const plain: unknown = JSON.parse(JSON.stringify(schema), (k, v: unknown) => (k === "description" && typeof v === "string" && !keep.descriptions ? undefined : v));
  return z.fromJSONSchema(plain as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodObject;
}

/** as_of and known_at, in an answer read at a past time. */
export const HORIZON = fromTypeBox(Type.Object(HorizonAnswer)).shape;

/** A count of items. */
export const COUNT = z.int().min(0);

/** What `bounded` (budget.ts, its Truncated) adds to a document it shortened. */
export const SHORTENED = {
  truncated: z.literal(true).optional(),
  truncated_lists: z.array(z.looseObject({ path: z.string(), kept: COUNT, total: COUNT })).optional(),
  left_out: z.array(z.looseObject({ path: z.string(), kept: COUNT, total: COUNT, left_out: z.array(z.string()) })).optional(),
  note: z.string().optional(),
};

/** What a page cut short to stay under the size budget (budget.ts' fitCount) says. */
export const CUT_PAGE = { truncated: z.literal(true).optional(), note: z.string().optional() };
