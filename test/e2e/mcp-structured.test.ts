import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { TOOLS } from "../../app/mcp/tools/index.js";
import { connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";
import { closed, closedValidator, expectStructured, outputSchemaOf } from "../support/structured.js";

/**
 * Structured output (MCP 2025-06-18): every tool declares an outputSchema and answers its
 * JSON as structuredContent too, through the SDK's client, which checks each answer
 * against the schema tools/list gave it (it throws on a missing or non-conforming one).
 */
let t: TestStack;
let client: Client;
let pid: string;

/** 120 lab tests with long names, twice: one document over 20 kB that shortens histories and then leaves tests out. */
const TESTS = Array.from({ length: 120 }, (_, i) => ({ test_name: `Structured output chemistry panel analyte number ${i + 1} measured in serum`, unit: "mg/dL" }));

async function call(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, any> };
  expectStructured(name, r);
  return r;
}
const answer = async (name: string, args: Record<string, unknown>) => {
  const r = await call(name, args);
  expect(r.isError, r.content[0]!.text).not.toBe(true);
  return r.structuredContent!;
};

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = t.app.server.address() as { port: number };
  const patient = async (first_name: string) => (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name, last_name: "Structa" } })).json().id as string;
  pid = await patient("Ada");
  await patient("Bea");
  const logs = [
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-01T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 8 }] } },
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-03T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 9 }] } },
    { log_type: "medication_list_update", patient_id: pid, timestamp: "2026-07-01T09:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"] }] } },
    ...[1, 2].map((m) => ({ log_type: "lab_results", patient_id: pid, timestamp: `2026-0${m}-15T07:00:00Z`, payload: { results: TESTS.map((x, i) => ({ ...x, value_numeric: 80 + i + m })) } })),
  ];
  const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } });
  expect(r.json().accepted, r.body.slice(0, 600)).toBe(logs.length);
  client = await connectMcp(`http://127.0.0.1:${port}`, t.adminKey);
  // Listing the tools is what has the SDK's client validate each answer against its schema.
  await client.listTools();
}, 60_000);

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("MCP structured output", () => {
  it("tools/list gives every tool an object outputSchema, the one its zod schema converts to, compact", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual(TOOLS.map((x) => x.name).sort());
    for (const tool of tools) {
      expect(tool.outputSchema, tool.name).toMatchObject({ type: "object", properties: { } });
      expect(tool.outputSchema, tool.name).toEqual(outputSchemaOf(tool.name));
    }
    // tools/list is read by a model: the twelve schemas together stay near 16 kB.
    expect(JSON.stringify(tools.map((x) => x.outputSchema)).length).toBeLessThan(17_000);
  });

  it("answers every tool with structuredContent equal to its JSON text and fitting its schema", async () => {
    const called = new Set<string>();
    const calls: [string, Record<string, unknown>][] = [
      ["find_patient", { name: "structa" }],
      ["get_stable_data", { patient_id: pid, as_of: "2026-07-02" }],
      ["list_event_state_modules", { patient_id: pid }],
      ["get_event_state_module", { patient_id: pid, module_type: "symptoms", entities: ["pain", "itching"], since: "2026-07-02" }],
      ["get_view", { patient_id: pid, view_type: "symptom_snapshot" }],
      ["list_views_and_blocks", { patient_id: pid }],
      ["list_views_and_blocks", { patient_id: pid, view_type: "labs_snapshot", known_at: "2026-11-01" }],
      ["get_view_block", { patient_id: pid, view_type: "medication_snapshot", block_id: "missed_doses" }],
      ["get_view_recent_events", { patient_id: pid, view_type: "symptom_snapshot" }],
      ["get_logs", { patient_id: pid, log_types: ["symptom_report"] }],
      ["get_events", { patient_id: pid }],
      ["get_changes", { patient_id: pid, since: "2026-07-01" }],
      ["query_logs", { patient_ids: [pid], group_by: ["type"], aggregations: [{ op: "count", alias: "n" }], include_total: true }],
      ["query_logs", { patient_ids: [pid], count: true }],
    ];
    for (const [name, args] of calls) {
      await answer(name, args);
      called.add(name);
    }
    expect([...called].sort()).toEqual(TOOLS.map((x) => x.name).sort());
    const mod = await answer("get_event_state_module", { patient_id: pid, module_type: "symptoms", entities: ["pain", "itching"] });
    expect(mod).toMatchObject({ filters: { entities: ["pain", "itching"], since: null }, entities_not_found: ["itching"] });
  });

  it("a markdown view carries the document as structuredContent.markdown beside the view's ids", async () => {
    const r = await call("get_view", { patient_id: pid, view_type: "labs_snapshot", format: "markdown", as_of: "2026-03-01" });
    expect(r.content[0]!.text).toMatch(/^# Labs snapshot/);
    expect(r.structuredContent).toEqual({ patient_id: pid, as_of: "2026-03-01T00:00:00.000Z", known_at: null, view_type: "labs_snapshot", format: "markdown", markdown: r.content[0]!.text });
  });

  it("answers shortened documents and pages cut short within their schemas", async () => {
    const labs = await answer("get_event_state_module", { patient_id: pid, module_type: "lab_results" });
    expect(labs).toMatchObject({ truncated: true, note: expect.any(String) });
    expect(labs.truncated_lists.length).toBeGreaterThan(0);
    expect(labs.left_out[0].left_out.length).toBeGreaterThan(0);
    expect((await answer("get_view", { patient_id: pid, view_type: "labs_snapshot" })).truncated).toBe(true);
    // One log over the budget: a page of one, shortened, with the cursor after it.
    const logs = await answer("get_logs", { patient_id: pid, log_types: ["lab_results"] });
    expect(logs).toMatchObject({ count: 1, truncated: true, next_cursor: expect.any(String) });
    const rows = await answer("query_logs", { patient_ids: [pid], filter: [{ field: "type", op: "eq", value: "lab_results" }] });
    expect(rows).toMatchObject({ count: 1, truncated: true, has_more: true, next_offset: 1 });
  });

  it("answers pages with their cursors within their schemas", async () => {
    const first = await answer("find_patient", { name: "structa", limit: 1 });
    expect(first).toMatchObject({ count: 1, next_cursor: expect.any(String) });
    expect(await answer("find_patient", { name: "structa", limit: 1, cursor: first.next_cursor })).toMatchObject({ count: 1 });
    const logs = await answer("get_logs", { patient_id: pid, log_types: ["symptom_report"], limit: 1 });
    expect(logs.next_cursor).toEqual(expect.any(String));
    expect(await answer("get_logs", { patient_id: pid, log_types: ["symptom_report"], limit: 1, cursor: logs.next_cursor })).toMatchObject({ count: 1 });
    const events = await answer("get_events", { patient_id: pid, limit: 2 });
    expect(await answer("get_events", { patient_id: pid, limit: 2, cursor: events.next_cursor })).toMatchObject({ count: 2 });
    const q = await answer("query_logs", { patient_ids: [pid], select: [{ path: "type" }], limit: 2 });
    expect(q).toMatchObject({ count: 2, has_more: true, next_offset: 2 });
    expect(await answer("get_view_recent_events", { patient_id: pid, view_type: "labs_snapshot", limit: 2 })).toMatchObject({ count: 2 });
  });

  it("answers a tool error without structuredContent, which the SDK's client accepts", async () => {
    for (const [name, args] of [
      ["get_event_state_module", { patient_id: pid, module_type: "moonphase" }],
      ["get_view_block", { patient_id: pid, view_type: "labs_snapshot", block_id: "nope" }],
      ["find_patient", {}],
      ["get_view", { patient_id: pid, view_type: "labs_snapshot", format: "pdf" }],
    ] as const) {
      const r = await call(name, args);
      expect(r.isError, name).toBe(true);
      expect(r.structuredContent, name).toBeUndefined();
    }
  });

  it("publishes open objects, and the tests' closed reading refuses a field a schema does not name", async () => {
    const extra = { patient_id: pid, count: 0, events: [], next_cursor: null, surprise: 1 };
    expect(closedValidator("get_events")(extra)).toBe(false);
    const { surprise: _, ...named } = extra;
    expect(closedValidator("get_events")(named)).toBe(true);
    expect(closed({ type: "object", properties: { payload: { type: "object", properties: {} } } })).toEqual({
      type: "object", properties: { payload: { type: "object", properties: {} } }, additionalProperties: false,
    });
    expect(outputSchemaOf("get_events").additionalProperties).toEqual({});
  });
});
