import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { callTool, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * get_logs and get_events fetch the logs other answers cite (log_ids), as REST's ?log_ids=
 * does; and an argument a tool does not take is refused, not dropped: get_logs once
 * answered every log to a log_ids it did not know, and nothing said so.
 */
let t: TestStack;
let pid: string;
let logIds: string[];
let client: Client;

const call = (name: string, args: Record<string, unknown>) => callTool(client, name, args);

beforeAll(async () => {
  t = await startStack();
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const logs = [
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-01T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 8 }] } },
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-03T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 4 }] } },
    { log_type: "lab_results", patient_id: pid, timestamp: "2026-07-02T07:00:00Z", payload: { results: [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 210, unit: "mg/dL", abnormal_flag: "H" }] } },
    { log_type: "user_login", patient_id: pid, timestamp: "2026-07-02T10:00:00Z", payload: {} },
  ];
  logIds = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json().results.map((x: { id: string }) => x.id);
  client = await connectMcp(`http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`, t.adminKey);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("log_ids on get_logs and get_events", () => {
  it("get_logs answers only the logs named, with the other filters, as REST does", async () => {
    const [pain, , lab] = logIds;
    const named = await call("get_logs", { patient_id: pid, log_ids: [pain, lab] });
    expect(named.isError).toBe(false);
    expect(named.json.logs.map((l: any) => l.id).sort()).toEqual([pain, lab].sort());
    expect((await call("get_logs", { patient_id: pid, log_ids: [pain, lab], log_types: ["lab_results"] })).json.logs.map((l: any) => l.id)).toEqual([lab]);
    expect((await call("get_logs", { patient_id: pid, log_ids: ["log_unknown"] })).json.logs).toEqual([]);
    const rest = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs?log_ids=${pain},${lab}`, headers: t.auth })).json();
    expect(named.json.logs).toEqual(rest.logs);
  });

  it("get_events answers only the events of the logs named", async () => {
    const [pain] = logIds;
    const events = await call("get_events", { patient_id: pid, log_ids: [pain] });
    expect(events.isError).toBe(false);
    expect(events.json.events.map((e: any) => e.source_event_log_id)).toEqual([pain]);
  });

  it("refuses more than 100 distinct ids with REST's message, and counts one id repeated once", async () => {
    const many = Array.from({ length: 101 }, (_, i) => `log_${i}`);
    for (const tool of ["get_logs", "get_events"]) {
      const r = await call(tool, { patient_id: pid, log_ids: many });
      expect(r).toMatchObject({ isError: true, text: expect.stringMatching(/^log_ids names 101 logs; name at most 100 per read/) });
      const repeated = await call(tool, { patient_id: pid, log_ids: Array(101).fill(logIds[0]) });
      expect(repeated.isError).toBe(false);
      expect(repeated.json.count).toBe(1);
    }
  });

  it("describes log_ids in both tools' schemas", async () => {
    const { tools } = await client.listTools();
    for (const name of ["get_logs", "get_events"]) {
      const props = tools.find((x) => x.name === name)!.inputSchema.properties as Record<string, { description: string }>;
      expect(props.log_ids!.description, name).toContain("at most 100 distinct ids");
    }
    expect(tools.find((x) => x.name === "get_logs")!.description).toContain("log_ids");
  });
});

describe("arguments a tool does not take", () => {
  it("are refused as a tool error naming the arguments the tool takes", async () => {
    const r = await call("get_logs", { patient_id: pid, log_id: logIds[0] });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('"log_id"');
    expect(r.text).toMatch(/takes only patient_id, log_types, since, until, trace, log_ids, limit, cursor$/);
    const stable = await call("get_stable_data", { patient_id: pid, module: "medications" });
    expect(stable).toMatchObject({ isError: true, text: expect.stringContaining("takes only patient_id, modules") });
  });

  it("are refused in tools/list's schemas too (additionalProperties false)", async () => {
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
  });
});
