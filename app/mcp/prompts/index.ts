import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { McpContext } from "../context.js";
import { registerMissingDataElicitation } from "./missing-data.js";
import { registerProviderAlert } from "./provider-alert.js";
import { registerVisitPrepSummary } from "./visit-prep.js";

/** Prompts resolved from live state: each reads the patient's current views and modules when asked. */
export function registerPrompts(server: McpServer, ctx: McpContext): void {
  registerMissingDataElicitation(server, ctx);
  registerProviderAlert(server, ctx);
  registerVisitPrepSummary(server, ctx);
}
