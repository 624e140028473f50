import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { Type } from "@sinclair/typebox";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { AppError, ERROR_CATALOGUE, type ErrorCode as AppErrorCode } from "../../src/errors.js";
import { responses } from "../http/schemas.js";
import type { Services } from "../services.js";
import { recordOutcome, trackPatientsRead, watchOutcomes, type CallOutcomes, type PatientsRead } from "./call-outcomes.js";
import { sendPlainErrors } from "./plain-errors.js";
import { createMcpServer, featuresFor } from "./server.js";

/**
 * MCP over streamable HTTP at /mcp, stateless: every POST gets a new server and transport
 * (`sessionIdGenerator: undefined`) built for the caller the auth plugin resolved.
 *
 * Why stateless: every tool reads the state afresh (nothing is kept between calls), so a
 * session would only add a per-session server held in one process's memory. Without
 * sessions any instance or api process can answer any request, a restart loses
 * nothing, and each request is authenticated on its own (a revoked key or an expired
 * patient token stops working at the next call, not at the next session). The cost is
 * that the server cannot push notifications or requests to the client outside a call,
 * which none of these tools need; GET (the server-to-client stream) and DELETE (session
 * end) therefore answer 405.
 *
 * Answers are plain JSON (`enableJsonResponse`), not an SSE stream: each call has one
 * answer and no progress to report, and JSON saves the stream framing.
 *
 * Errors: an answer that is not a 2xx carries the spec's error body, as on every other
 * route (the MCP transport spec asks only for an HTTP error status there, and MCP
 * clients do not read that body as JSON-RPC); a JSON-RPC error object comes only inside
 * a 200, answering by id a message the server read. So the transport's own refusals
 * (406 Accept, 415 Content-Type, 400 not JSON-RPC) are turned into AppErrors, and the
 * answer is sent through Fastify, after the audit entry is stored (plugins/audit.ts).
 */
export const mcpPlugin: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const config = { scope: "mcp:patient-state" as const };

  // JSON-RPC comes as application/json, read by the app's parser (malformed JSON is its
  // 400). Anything else is refused here with what to send, before the transport sees it.
  app.removeContentTypeParser("text/plain");
  app.addContentTypeParser("*", (req, _payload, done) => {
    const message = `POST /mcp takes JSON-RPC 2.0 messages as Content-Type: application/json (got ${req.headers["content-type"] ?? "none"})`;
    done(new AppError("unsupported_media_type", message, [{ type: "unsupported_media_type", message }]), undefined);
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
      if (req.body === undefined) throw new AppError("bad_request", `POST /mcp needs a body: ${SEND}`);
      if (Array.isArray(req.body) && req.body.length === 0) throw new AppError("bad_request", `an empty batch: ${SEND}`);
      const invalid = invalidParams(req.body);
      if (invalid) {
        recordOutcome(req, invalid.id, 422);
        return reply.header("content-type", "application/json").send(JSON.stringify({ jsonrpc: "2.0", error: { code: ErrorCode.InvalidParams, message: invalid.message }, id: invalid.id }));
      }
      const known: CallOutcomes = new Map();
      const read: PatientsRead = new Map();
      trackPatientsRead(req, read);
      const server = createMcpServer(services, req.principal, featuresFor(req.body), known, read);
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      watchOutcomes(req, transport, known);
      sendPlainErrors(transport);
      // A client gone mid-call: close the server (and its transport) so in-flight handlers
      // are aborted, and stop waiting for an answer no one will read. After a finished
      // answer nothing is left to release, and closing would only build a "connection
      // closed" error with a stack trace per request.
      const gone = new Promise<undefined>((resolve) => {
        reply.raw.once("close", () => {
          if (reply.raw.writableFinished) return;
          void server.close();
          resolve(undefined);
        });
      });
      await server.connect(transport);
      const answer = await Promise.race([transport.handleRequest(webRequest(req), { parsedBody: req.body }), gone]);
      if (answer === undefined) return reply.hijack();
      if (answer.status >= 400) throw await refusal(answer, req.body);
      reply.code(answer.status);
      if (answer.status === 202) return reply.send();
      return reply.header("content-type", answer.headers.get("content-type") ?? "application/json").send(await answer.text());
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

const SEND = 'send one JSON-RPC 2.0 message ({"jsonrpc":"2.0","id":1,"method":"tools/list"}) or an array of at most 100';

/** The headers the transport reads (Accept, Content-Type, protocol version, session), as a web Request. */
const FORWARDED = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id"] as const;

function webRequest(req: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of FORWARDED) {
    const v = req.headers[name];
    if (typeof v === "string") headers.set(name, v);
  }
  return new Request("http://localhost/mcp", { method: "POST", headers });
}

/**
 * A refusal of the transport (a JSON-RPC error with id null and an HTTP error status) as
 * the AppError of that status, carrying the JSON-RPC code in its detail.
 */
async function refusal(answer: Response, body: unknown): Promise<AppError> {
  let rpc: { code?: unknown; message?: unknown } = {};
  try {
    rpc = ((await answer.json()) as { error?: typeof rpc }).error ?? {};
  } catch {
    // Not JSON: the status says enough.
  }
  if (rpc.code === ErrorCode.ParseError) {
    // The body parsed (malformed JSON is the app's 400 before this): it is JSON, but no
    // JSON-RPC message, which JSON-RPC 2.0 calls an Invalid Request; the transport's
    // "Parse error: Invalid JSON-RPC message" names neither that nor a fix.
    const said = `Invalid Request: ${whyNotJsonRpc(body)}`;
    return new AppError("bad_request", `${said}: ${SEND}`, [{ type: "jsonrpc_error", message: said, jsonrpc_code: ErrorCode.InvalidRequest }]);
  }
  const said = typeof rpc.message === "string" ? rpc.message : `the MCP transport refused the request (HTTP ${answer.status})`;
  const jsonrpcCode = typeof rpc.code === "number" ? rpc.code : undefined;
  return new AppError(codeOf(answer.status), said, [{ type: "jsonrpc_error", message: said, ...(jsonrpcCode !== undefined ? { jsonrpc_code: jsonrpcCode } : {}) }]);
}

/** What makes a parsed body no JSON-RPC 2.0 message (or batch of them), in a client's terms. */
function whyNotJsonRpc(body: unknown, at = "the body"): string {
  if (Array.isArray(body)) {
    const bad = body.findIndex((m) => messageProblem(m) !== undefined);
    return bad < 0 ? `${at} is not a batch of JSON-RPC messages` : whyNotJsonRpc(body[bad], `item ${bad} of the batch`);
  }
  return `${at} ${messageProblem(body) ?? "is not a JSON-RPC message"}`;
}

function messageProblem(m: unknown): string | undefined {
  if (m === null || typeof m !== "object" || Array.isArray(m)) return `is ${m === null ? "null" : Array.isArray(m) ? "an array" : `a ${typeof m}`}, not a JSON-RPC message object`;
  const { jsonrpc, method } = m as { jsonrpc?: unknown; method?: unknown };
  if (jsonrpc !== "2.0") return `needs "jsonrpc": "2.0"`;
  if (method === undefined && !("result" in m) && !("error" in m)) return `needs "method" (a request or notification) or "result" or "error" (a response)`;
  if (method !== undefined && typeof method !== "string") return `has a "method" that is not a string`;
  return undefined;
}

/** The catalogue entry of an HTTP status (the first one, e.g. 400 bad_request); else a client or server error. */
function codeOf(status: number): AppErrorCode {
  const found = (Object.keys(ERROR_CATALOGUE) as AppErrorCode[]).find((c) => ERROR_CATALOGUE[c].status === status);
  return found ?? (status < 500 ? "bad_request" : "internal");
}

/** Methods whose `params` must be an object naming what to call or read. */
const NEEDS_PARAMS = new Set(["tools/call", "resources/read", "prompts/get"]);

/**
 * A single request whose params are missing or not an object. The SDK would answer it
 * with an internal error (-32603) carrying its schema library's dump; JSON-RPC says
 * invalid params (-32602), with a message a client can act on.
 */
function invalidParams(body: unknown): { id: string | number; message: string } | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const m = body as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown };
  // Not a JSON-RPC request at all: the transport refuses it as such.
  if (m.jsonrpc !== "2.0" || (typeof m.id !== "string" && typeof m.id !== "number")) return undefined;
  if (typeof m.method !== "string" || !NEEDS_PARAMS.has(m.method)) return undefined;
  const params = m.params;
  if (params === null || typeof params !== "object" || Array.isArray(params)) return { id: m.id, message: `${m.method} needs params: an object` };
  const args = (params as { arguments?: unknown }).arguments;
  if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args))) {
    return { id: m.id, message: `${m.method} params.arguments must be an object` };
  }
  return undefined;
}
