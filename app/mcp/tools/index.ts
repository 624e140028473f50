import type { ToolDef } from "../context.js";
import { findPatient } from "./find-patient.js";
import { getEventStateModule } from "./get-event-state-module.js";
import { getChanges } from "./get-changes.js";
import { getEvents } from "./get-events.js";
import { getLogs } from "./get-logs.js";
import { getStableData } from "./get-stable-data.js";
import { getView } from "./get-view.js";
import { getViewBlock } from "./get-view-block.js";
import { getViewRecentEvents } from "./get-view-recent-events.js";
import { listEventStateModules } from "./list-event-state-modules.js";
import { listViewsAndBlocks } from "./list-views-and-blocks.js";
import { queryLogs } from "./query-logs.js";

/**
 * The tools, in the order tools/list shows them: the nine of the spec over one patient,
 * between find_patient (which finds that patient) and query_logs (which aggregates logs
 * across patients or of one).
 */
export const TOOLS = [
  findPatient, getStableData, listEventStateModules, getEventStateModule, getView, listViewsAndBlocks, getViewBlock,
  getViewRecentEvents, getChanges, getLogs, getEvents, queryLogs,
] as unknown as readonly ToolDef[];
