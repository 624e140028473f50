import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { Principal } from "../../src/auth/scopes.js";
import type { Services } from "../services.js";
import type { CallOutcomes, PatientsRead } from "./call-outcomes.js";
import { isBound, offeredTo, PATIENT_ID, runTool, toolError, type McpContext, type ToolDef } from "./context.js";
import { registerPrompts } from "./prompts/index.js";
import { registerResources } from "./resources.js";
import { TOOLS } from "./tools/index.js";

const INSTRUCTIONS = [
  "Patient State Service: a patient's compiled clinical state (stable facts, rolling event-state modules, views",
  "built from templates) and the raw logs behind it. Start with list_views_and_blocks or get_view for a summary,",
  "get_stable_data for who the patient is, get_event_state_module for recent data, get_logs for the raw facts.",
  "For 'what changed since the last visit' (or any two times), get_changes answers by domain in one call.",
  "Without a patient's service id (pat_...), find_patient looks it up by name, date of birth or identifier.",
  "For counts, averages, extremes and trends over logs (one patient, a cohort or the project), query_logs computes",
  "them server side: prefer it to paging through get_logs.",
  "Every fact carries the ids of the logs it came from (refs, log_id): cite them. Answers are JSON, at most about",
  "20 kB; longer lists come back in pages (next_cursor) or marked truncated.",
].join(" ");

/** Read-only, and only this service's data: clients may call these tools without asking the user each time. */
const ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * Each tool's whole argument schema, for credentials bound to a patient and for the
 * others. Built once, not per request: zod compiles a parser on a schema's first use.
 */
const inputSchemas = (bound: boolean) => {
  const patient_id = bound ? PATIENT_ID.bound : PATIENT_ID.open;
  // Closed, as the project tools' are: an argument a tool does not take (log_id for
  // log_ids, say) is refused naming those it takes, rather than dropped, which answered
  // as if the filter had matched everything.
  const schemaOf = (t: ToolDef): z.ZodObject => z.strictObject(t.kind === "patient" ? { patient_id, ...t.args } : t.args);
  return new Map(TOOLS.map((t) => [t.name, schemaOf(t)]));
};
const INPUT_SCHEMAS = { bound: inputSchemas(true), open: inputSchemas(false) };

/**
 * The server's JSON Schema validator (used for elicitation, which these tools do not
 * use). The SDK builds a new Ajv per server unless given one, which costs more than a
 * whole tool call; one instance serves every request.
 */
const VALIDATOR = new AjvJsonSchemaValidator();

/** What a server built for one request registers. */
export interface McpFeatures {
  tools: boolean;
  resources: boolean;
  prompts: boolean;
}

export const ALL_FEATURES: McpFeatures = { tools: true, resources: true, prompts: true };
const NONE: McpFeatures = { tools: false, resources: false, prompts: false };

/** The features each JSON-RPC method needs; a method not listed (initialize above all) gets them all. */
const NEEDS: Record<string, McpFeatures> = {
  "tools/list": { ...NONE, tools: true },
  "tools/call": { ...NONE, tools: true },
  "resources/list": { ...NONE, resources: true },
  "resources/templates/list": { ...NONE, resources: true },
  "resources/read": { ...NONE, resources: true },
  "prompts/list": { ...NONE, prompts: true },
  "prompts/get": { ...NONE, prompts: true },
  "completion/complete": { ...NONE, resources: true, prompts: true },
  ping: NONE,
};

/**
 * The features a POST body (one message or a batch) can use. A server lives for one
 * request, so registering the resources and prompts for a tools/call would be work
 * thrown away (about two thirds of building a server). initialize, which advertises
 * the capabilities, and any other method get everything; notifications need nothing.
 */
export function featuresFor(body: unknown): McpFeatures {
  const messages = Array.isArray(body) ? body : [body];
  const out = { ...NONE };
  for (const m of messages) {
    const method = m !== null && typeof m === "object" ? (m as { method?: unknown }).method : undefined;
    if (typeof method !== "string") return ALL_FEATURES;
    const needs = NEEDS[method] ?? (method.startsWith("notifications/") ? NONE : ALL_FEATURES);
    out.tools ||= needs.tools;
    out.resources ||= needs.resources;
    out.prompts ||= needs.prompts;
  }
  return out;
}

/**
 * One MCP server for one request and one caller. Tools, resources and prompts close over
 * the caller's principal, so tenancy (project, patient token) is decided by the auth
 * plugin once, and every handler reads through the same StateReader as REST.
 */
export function createMcpServer(
  services: Services,
  principal: Principal,
  features: McpFeatures = ALL_FEATURES,
  outcomes: CallOutcomes = new Map(),
  patientsRead: PatientsRead = new Map(),
): McpServer {
  const ctx: McpContext = { services, principal, outcomes, patientsRead };
  const server = new McpServer(
    { name: "patient-state-service", title: "Patient State Service", version: "1.0.0" },
    { instructions: INSTRUCTIONS, jsonSchemaValidator: VALIDATOR },
  );
  const schemas = isBound(principal) ? INPUT_SCHEMAS.bound : INPUT_SCHEMAS.open;
  for (const tool of features.tools ? TOOLS.filter((t) => offeredTo(principal, t)) : []) {
    server.registerTool(
      tool.name,
      { title: tool.title, description: tool.description, inputSchema: schemas.get(tool.name)!, outputSchema: tool.output, annotations: ANNOTATIONS },
      (args: Record<string, unknown>, extra) => runTool(ctx, tool, args, extra.requestId),
    );
  }
  if (features.tools) answerCallsOfKnownToolsOnly(server, ctx, schemas);
  if (features.resources) registerResources(server, ctx);
  if (features.prompts) registerPrompts(server, ctx);
  // A server lives for one request, with no stream to send list_changed on: the lists never
  // change under a client, so none is promised (the SDK advertises listChanged: true).
  const fixed = { listChanged: false };
  server.server.registerCapabilities({ ...(features.tools ? { tools: fixed } : {}), ...(features.resources ? { resources: fixed } : {}), ...(features.prompts ? { prompts: fixed } : {}) });
  return server;
}

const MOST_ISSUES = 5;

/**
 * "Too big: expected array to have <=50 items at modules; …": the first few of what can be
 * 200,000 issues. An argument the tool does not take is answered with those it does.
 */
function issuesText(error: z.ZodError, schema: z.ZodObject): string {
  const shown = error.issues.slice(0, MOST_ISSUES).map((i) => {
    const where = i.path.length ? ` at ${i.path.join(".")}` : "";
    const takes = i.code === "unrecognized_keys" && i.path.length === 0 ? `; this tool takes only ${Object.keys(schema.shape).join(", ")}` : "";
    return `${i.message}${where}${takes}`;
  });
  const more = error.issues.length - shown.length;
  return `${shown.join("; ")}${more > 0 ? ` (and ${more} more)` : ""}`;
}

/**
 * tools/call as MCP says: a tool this server does not have is a JSON-RPC error (-32602),
 * not a tool result (the SDK answers one with isError, which a model reads as the tool's
 * own failure). Arguments that do not fit the schema stay a tool result the model can
 * correct, saying which argument and why.
 */
function answerCallsOfKnownToolsOnly(server: McpServer, ctx: McpContext, schemas: Map<string, z.ZodObject>): void {
  server.server.removeRequestHandler("tools/call");
  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: given } = request.params;
    const tool = TOOLS.find((t) => t.name === name);
    if (!tool) {
      const names = TOOLS.filter((t) => offeredTo(ctx.principal, t)).map((t) => t.name).join(", ");
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}. This server's tools are ${names}.`);
    }
    const schema = schemas.get(name)!;
    const parsed = await schema.safeParseAsync(given ?? {});
    if (!parsed.success) return toolError(`Invalid arguments for tool ${name}: ${issuesText(parsed.error, schema)}`);
    return runTool(ctx, tool, parsed.data, extra.requestId);
  });
}
