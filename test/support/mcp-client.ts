import type { FastifyInstance } from "fastify";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expectStructured } from "./structured.js";

/** The base URL of a test app listening on a port of its own (app.listen first). */
export const baseUrl = (app: FastifyInstance): string => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

/** An MCP SDK client over a real socket to the app's /mcp, with this bearer credential. */
export async function connectMcp(base: string, token: string): Promise<Client> {
  const c = new Client({ name: "pss-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return c;
}

/**
 * A tool's answer: whether it is an error, its one text content, and that text parsed when
 * it is JSON. Every answer's structuredContent is checked on the way (see expectStructured).
 */
export async function callTool(c: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string; json: any; meta: Record<string, unknown> | undefined }> {
  const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };
  expectStructured(name, r);
  const text = r.content[0]!.text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { isError: r.isError === true, text, json, meta: r._meta };
}
