import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let base: string;
const ACCEPT = "application/json, text/event-stream";

beforeAll(async () => {
  t = await startStack();
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await t?.close();
});

const post = (headers: Record<string, string>, body?: string) =>
  fetch(`${base}/mcp`, { method: "POST", headers: { authorization: `Bearer ${t.adminKey}`, ...headers }, ...(body !== undefined ? { body } : {}) });

const specBody = (status: number) => ({ error: true, status_code: status, error_type: expect.any(String), message: expect.any(String), details: expect.any(Array), timestamp: expect.any(String) });

describe("POST /mcp refused at the HTTP level", () => {
  it("answers a body that is not application/json with 415 and the spec's body saying what to send", async () => {
    const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/json-rpc", undefined]) {
      const r = await post({ accept: ACCEPT, ...(type ? { "content-type": type } : {}) }, ping);
      expect(r.status, type).toBe(415);
      const body = await r.json();
      expect(body, type).toMatchObject(specBody(415));
      expect(body.message).toContain("Content-Type: application/json");
    }
  });

  it("answers an Accept without both JSON and an event stream with 406 and the spec's body", async () => {
    for (const accept of [undefined, "application/json", "text/html"]) {
      const r = await post({ "content-type": "application/json", ...(accept ? { accept } : {}) }, '{"jsonrpc":"2.0","id":1,"method":"ping"}');
      expect(r.status, accept).toBe(406);
      expect(await r.json(), accept).toMatchObject({ ...specBody(406), message: expect.stringContaining("text/event-stream") });
    }
  });

  it("answers malformed JSON, a body that is not JSON-RPC, an empty or oversized batch with 400 and the spec's body", async () => {
    const cases = [
      '{"jsonrpc":', "", "42", '"x"', "null", '{"id":1,"method":"ping"}', "[1,2]", "[]",
      JSON.stringify(Array.from({ length: 101 }, (_, id) => ({ jsonrpc: "2.0", id, method: "ping" }))),
    ];
    for (const body of cases) {
      const r = await post({ accept: ACCEPT, "content-type": "application/json" }, body);
      expect(r.status, body.slice(0, 40)).toBe(400);
      const json = await r.json();
      expect(json, body.slice(0, 40)).toMatchObject(specBody(400));
      expect(json.jsonrpc).toBeUndefined();
    }
    // JSON, but no JSON-RPC message: an Invalid Request (-32600), saying what it lacks.
    const notRpc = async (body: string) => (await post({ accept: ACCEPT, "content-type": "application/json" }, body)).json();
    const fortyTwo = await notRpc("42");
    expect(fortyTwo.message).toContain('"jsonrpc":"2.0"');
    expect(fortyTwo.details).toEqual([{ type: "jsonrpc_error", message: "Invalid Request: the body is a number, not a JSON-RPC message object", jsonrpc_code: -32600 }]);
    expect((await notRpc('{"id":1,"method":"ping"}')).details[0].message).toBe('Invalid Request: the body needs "jsonrpc": "2.0"');
    expect((await notRpc('{"jsonrpc":"2.0","id":1}')).details[0].message).toBe('Invalid Request: the body needs "method" (a request or notification) or "result" or "error" (a response)');
    expect((await notRpc('[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":5}]')).details[0].message).toBe('Invalid Request: item 1 of the batch has a "method" that is not a string');
  });

  it("answers an unsupported MCP-Protocol-Version header with 400 and the spec's body naming the supported ones", async () => {
    const r = await post({ accept: ACCEPT, "content-type": "application/json", "mcp-protocol-version": "1999-01-01" }, '{"jsonrpc":"2.0","id":1,"method":"ping"}');
    expect(r.status).toBe(400);
    expect(await r.json()).toMatchObject({ ...specBody(400), message: expect.stringContaining("2025-06-18") });
  });
});

describe("POST /mcp answered in JSON-RPC", () => {
  it("answers an unknown method and missing params inside a 200, by id", async () => {
    const headers = { accept: ACCEPT, "content-type": "application/json" };
    const unknown = await post(headers, '{"jsonrpc":"2.0","id":7,"method":"nope"}');
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32601 } });
    const noParams = await post(headers, '{"jsonrpc":"2.0","id":"a","method":"tools/call"}');
    expect(noParams.status).toBe(200);
    expect(await noParams.json()).toMatchObject({ jsonrpc: "2.0", id: "a", error: { code: -32602 } });
  });

  it("keeps the MCP SDK's client working, and it surfaces an HTTP refusal as a StreamableHTTPError with the status", async () => {
    const client = new Client({ name: "pss-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.adminKey}` } } }));
    expect((await client.listTools()).tools.length).toBe(12);
    const r = (await client.callTool({ name: "get_stable_data", arguments: { patient_id: "pat_nobody" } })) as { isError?: boolean };
    expect(r.isError).toBe(true);
    await client.close();
    // A client whose HTTP layer sends the wrong content type gets the 415 as an error carrying the status.
    const wrongType: typeof fetch = (url, init) => fetch(url, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers)), "content-type": "text/plain" } });
    const refused = new Client({ name: "pss-test", version: "1.0.0" });
    const auth = { requestInit: { headers: { authorization: `Bearer ${t.adminKey}` } }, fetch: wrongType };
    const err = await refused.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), auth)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(415);
    expect((err as Error).message).toContain("Content-Type: application/json");
  });
});
