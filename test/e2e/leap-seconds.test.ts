import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { callTool, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * One rule for a leap second (…:60) in a time bound: refused, saying so, as the catalog
 * refuses it in a log's timestamp. REST's bounds once read it as …:59.999 while the log
 * query's timestamp filter refused it, and an MCP argument was told its day did not exist.
 */
const LEAP = "2026-11-01T23:59:60Z";
let t: TestStack;
let pid: string;
let client: Client;

beforeAll(async () => {
  t = await startStack();
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  client = await connectMcp(`http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`, t.adminKey);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

const get = (url: string) => t.app.inject({ method: "GET", url, headers: t.auth });

describe("a leap second in a time bound", () => {
  it("is a 422 naming the parameter and saying why on every REST bound", async () => {
    const state = `/v1/state/${pid}`;
    const cases: [string, string][] = [
      [`${state}/event-modules/glucose?as_of=${LEAP}`, "as_of"],
      [`${state}/stable?known_at=${LEAP}`, "known_at"],
      [`${state}/logs?since=${LEAP}`, "since"],
      [`${state}/logs?until=${LEAP}`, "until"],
      [`${state}/events?since=${LEAP}`, "since"],
      [`${state}/changes?since=2026-11-01&until=${LEAP}`, "until"],
      [`${state}/diff?from=${LEAP}`, "from"],
      [`${state}/views/symptom_snapshot/recent?since=${LEAP}`, "since"],
      [`/v1/audit?since=${LEAP}`, "since"],
    ];
    for (const [url, name] of cases) {
      const r = await get(url);
      expect(r.statusCode, url).toBe(422);
      expect(r.json(), url).toMatchObject({ error_type: "validation_error", details: [{ location: ["query", name], input_value: LEAP, message: expect.stringContaining("leap second") }] });
    }
    // Its minute's last millisecond is the bound it meant.
    expect((await get(`${state}/logs?since=2026-11-01T23:59:59.999Z`)).statusCode).toBe(200);
  });

  it("is refused by the log query's timestamp filter with the same words", async () => {
    for (const filter of [[{ field: "timestamp", op: "gte", value: LEAP }], [{ field: "timestamp", op: "in", value: ["2026-11-01T00:00:00Z", LEAP] }]]) {
      const r = await t.app.inject({ method: "POST", url: `/v1/state/${pid}/logs/query`, headers: t.auth, payload: { filter } });
      expect(r.statusCode).toBe(422);
      expect(r.json().details[0]).toMatchObject({ location: ["body", "filter", 0, "value"], message: expect.stringContaining("leap second") });
    }
  });

  it("is a tool error saying so in an MCP argument", async () => {
    const r = await callTool(client, "get_event_state_module", { patient_id: pid, module_type: "glucose", as_of: LEAP });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("leap second");
    expect(r.text).not.toContain("real calendar date");
  });
});
