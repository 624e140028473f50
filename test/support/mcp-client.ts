import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** An MCP SDK client connected to `${base}/mcp` with a bearer token (a real socket). */
export async function connectMcp(base: string, token: string): Promise<Client> {
  const c = new Client({ name: "pss-test", version: "1.0.0" });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return c;
}

/** Calls a tool; answers its one text content, parsed as JSON when it is JSON. */
export async function callTool(c: Client, name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string; json: any; meta: Record<string, unknown> | undefined }> {
  const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[]; _meta?: Record<string, unknown> };
  const text = r.content[0]!.text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { isError: r.isError === true, text, json, meta: r._meta };
}
