import { Type, type TSchema } from "@sinclair/typebox";
import { Nullable } from "../../schemas.js";
import { EventRowSchema, HorizonAnswer, LogRowSchema, ModuleRead, ViewWindowSchema } from "./schemas.js";

/**
 * The state routes' 200 answers. The MCP tools answer the same documents, so their
 * outputSchemas are derived from these (app/mcp/output.ts) rather than written again.
 */

const patient_id = Type.String();
const next_cursor = Type.Union([Type.String(), Type.Null()]);

/** GET /v1/state/{pid}/stable */
export const StableAnswer = Type.Object({ patient_id, ...HorizonAnswer, modules: Type.Record(Type.String(), ModuleRead) });

/** GET /v1/state/{pid}/event-modules */
export const EventModuleList = Type.Object({
  patient_id,
  ...HorizonAnswer,
  modules: Type.Array(Type.Object({ module_type: Type.String(), created_at: Type.String(), updated_at: Type.String() })),
});

/** GET /v1/state/{pid}/event-modules/{type}: this, then the module's read (ModuleRead). */
export const EventModuleHead = Type.Object({ patient_id, ...HorizonAnswer });

/** GET /v1/state/{pid}/logs */
export const LogsPage = Type.Object({ patient_id, count: Type.Integer(), logs: Type.Array(LogRowSchema), next_cursor });

/** GET /v1/state/{pid}/events */
export const EventsPage = Type.Object({ patient_id, count: Type.Integer(), events: Type.Array(EventRowSchema), next_cursor });

/** One view in GET /v1/state/{pid}/views. */
export const ViewSummary = Type.Object({ view_type: Type.String(), view_id: Type.String(), has_blocks: Type.Boolean(), has_temp: Type.Boolean() });

/** GET /v1/state/{pid}/views */
export const ViewList = Type.Object({ patient_id, ...HorizonAnswer, views: Type.Array(ViewSummary) });

/** GET /v1/state/{pid}/views/{type}?format=raw, its blocks in the shape `block`. */
export const viewAnswer = <B extends TSchema>(block: B) =>
  Type.Object({
    patient_id,
    ...HorizonAnswer,
    view_type: Type.String(),
    view_id: Type.String(),
    valid_from: Nullable(Type.String()),
    valid_to: Nullable(Type.String()),
    window: ViewWindowSchema,
    content: Type.Object({ blocks: Type.Array(block), temp: Type.Array(block) }),
  });

/** One template block of a view, listed. */
export const BlockListing = Type.Object({ block_id: Type.String(), block_name: Type.String(), segment: Type.String(), has_result: Type.Boolean() });

/** GET /v1/state/{pid}/views/{type}/blocks */
export const ViewBlocks = Type.Object({ patient_id, ...HorizonAnswer, view_type: Type.String(), blocks: Type.Array(BlockListing) });

/** GET /v1/state/{pid}/views/{type}/blocks/{block_id} */
export const ViewBlockAnswer = Type.Object({
  patient_id,
  ...HorizonAnswer,
  view_type: Type.String(),
  block_id: Type.String(),
  block_name: Type.String(),
  segment: Type.String(),
  content: Type.String(),
  data: Type.Unknown(),
  refs: Type.Array(Type.String()),
  has_result: Type.Boolean({ description: "false: the template's block has nothing to say yet (content empty, data null)" }),
  updated_at: Nullable(Type.String()),
});
