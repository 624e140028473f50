import type { z } from "zod";
import type { ToolDef } from "../context.js";
import { getEventStateModule } from "./get-event-state-module.js";
import { getEvents } from "./get-events.js";
import { getLogs } from "./get-logs.js";
import { getStableData } from "./get-stable-data.js";
import { getView } from "./get-view.js";
import { getViewBlock } from "./get-view-block.js";
import { getViewRecentEvents } from "./get-view-recent-events.js";
import { listEventStateModules } from "./list-event-state-modules.js";
import { listViewsAndBlocks } from "./list-views-and-blocks.js";

/** The nine tools of the spec, in the order tools/list shows them. */
export const TOOLS = [
  getStableData, listEventStateModules, getEventStateModule, getView, listViewsAndBlocks, getViewBlock,
  getViewRecentEvents, getLogs, getEvents,
] as unknown as readonly ToolDef<z.ZodRawShape>[];
