import type { ServerResponse } from "node:http";
import type { FastifyPluginAsync } from "fastify";
import { Type } from "@sinclair/typebox";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { AppError } from "../errors.js";
import { responses } from "../http/schemas.js";
import type { Services } from "../services.js";
import { recordOutcome, watchOutcomes, type CallOutcomes } from "./call-outcomes.js";
import { createMcpServer, featuresFor } from "./server.js";

/**
 * MCP over streamable HTTP at /mcp, stateless: every POST gets a new server and transport
 * (`sessionIdGenerator: undefined`) built for the caller the auth plugin resolved.
 *
 * Why stateless: every tool reads the state afresh (nothing is kept between calls), so a
 * session would only add a per-session server held in one process's memory. Without
 * sessions any instance or cluster worker can answer any request, a restart loses
 * nothing, and each request is authenticated on its own (a revoked key or an expired
 * patient token stops working at the next call, not at the next session). The cost is
 * that the server cannot push notifications or requests to the client outside a call,
 * which none of these tools need; GET (the server-to-client stream) and DELETE (session
 * end) therefore answer 405.
 *
 * Answers are plain JSON (`enableJsonResponse`), not an SSE stream: each call has one
 * answer and no progress to report, and JSON saves the stream framing.
 */
export const mcpPlugin: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const config = { scope: "mcp:patient-state" as const };

  // Malformed JSON is a JSON-RPC parse error (-32700) here, not the REST error body: an MCP
  // client reads JSON-RPC. The body is kept aside and answered by the route.
  const parseJson = app.getDefaultJsonParser("ignore", "ignore");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (req, body, done) => {
    if (body === "") return done(null, undefined);
    parseJson(req, body as string, (err, value) => done(null, err ? new UnparsableBody(err.message) : value));
  });

  app.post(
    "/mcp",
    {
      config,
      schema: {
        summary: "MCP (JSON-RPC 2.0 over streamable HTTP, stateless): tools, resources and prompts over patient state",
        tags: ["mcp"],
        description: "Send JSON-RPC requests (initialize, tools/list, tools/call, resources/*, prompts/*) with Accept: application/json, text/event-stream.",
        response: responses({
          200: Type.Object({}, { additionalProperties: true, description: "JSON-RPC response (or array of responses)" }),
          202: Type.Null({ description: "Notification accepted; no body" }),
        }),
      },
    },
    async (req, reply) => {
      if (req.body instanceof UnparsableBody) {
        reply.hijack();
        return rpcError(reply.raw, 400, ErrorCode.ParseError, `Parse error: ${req.body.reason}`, null);
      }
      const invalid = invalidParams(req.body);
      if (invalid) {
        if (typeof invalid.id === "string" || typeof invalid.id === "number") recordOutcome(req, invalid.id, 422);
        reply.hijack();
        return rpcError(reply.raw, 200, invalid.code ?? ErrorCode.InvalidParams, invalid.message, invalid.id);
      }
      const known: CallOutcomes = new Map();
      const server = createMcpServer(services, req.principal, featuresFor(req.body), known);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      watchOutcomes(req, transport, known);
      // From here the transport writes the response; Fastify must not send one too.
      reply.hijack();
      // A client gone mid-call: close the server (and its transport) so in-flight handlers
      // are aborted. After a finished answer nothing is left to release, and closing
      // would only build a "connection closed" error with a stack trace per request.
      reply.raw.on("close", () => {
        if (!reply.raw.writableFinished) void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req.raw, reply.raw, req.body);
      } catch (err) {
        req.log.error({ err }, "MCP request failed");
        if (!reply.raw.headersSent) rpcError(reply.raw, 500, ErrorCode.InternalError, "internal server error", null);
      }
    },
  );

  // Stateless: there is no server-to-client stream to open and no session to end.
  const notAllowed = async () => {
    throw new AppError("method_not_allowed", "this MCP server is stateless: send JSON-RPC messages with POST /mcp; there is no stream (GET) or session (DELETE)", [], {
      headers: { allow: "POST" },
    });
  };
  app.get("/mcp", { config, schema: { hide: true } }, notAllowed);
  app.delete("/mcp", { config, schema: { hide: true } }, notAllowed);
};

/** A POST /mcp body that is not JSON, with the parser's reason. */
class UnparsableBody {
  constructor(readonly reason: string) {}
}

/** Methods whose `params` must be an object naming what to call or read. */
const NEEDS_PARAMS = new Set(["tools/call", "resources/read", "prompts/get"]);

/**
 * A single request whose params are missing or not an object. The SDK would answer it
 * with an internal error (-32603) carrying its schema library's dump; JSON-RPC says
 * invalid params (-32602), with a message a client can act on.
 */
function invalidParams(body: unknown): { id: unknown; message: string; code?: number } | undefined {
  // JSON-RPC: a batch with no request is itself an invalid request, answered once.
  if (Array.isArray(body) && body.length === 0) return { id: null, message: "Invalid Request: an empty batch", code: ErrorCode.InvalidRequest };
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const m = body as { method?: unknown; params?: unknown; id?: unknown };
  if (typeof m.method !== "string" || !NEEDS_PARAMS.has(m.method) || m.id === undefined) return undefined;
  const params = m.params;
  if (params === null || typeof params !== "object" || Array.isArray(params)) return { id: m.id, message: `${m.method} needs params: an object` };
  const args = (params as { arguments?: unknown }).arguments;
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
    return { id: m.id, message: `${m.method} params.arguments must be an object` };
  }
  return undefined;
}

/**
 * A JSON-RPC error written on the raw response (the reply is hijacked): the route's
 * response schemas are the REST error body's, and an MCP client reads JSON-RPC.
 */
function rpcError(res: ServerResponse, status: number, code: number, message: string, id: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id }));
}
