import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let base: string;
let a: string;
let b: string;
let client: Client;

const log = (patient_id: string, timestamp: string, name: string, score: number) =>
  ({ log_type: "symptom_report", patient_id, timestamp, payload: { instrument: "esas_r", symptoms: [{ name, score }] }, trace: `trace-${patient_id}` });

async function call(name: string, args: Record<string, unknown> = {}): Promise<{ isError: boolean; text: string }> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text: string }[] };
  return { isError: r.isError === true, text: r.content[0]!.text };
}

/** Arguments that make each tool valid apart from the patient. */
const TOOL_ARGS: Record<string, Record<string, unknown>> = {
  get_stable_data: {},
  list_event_state_modules: {},
  get_event_state_module: { module_type: "symptoms" },
  get_view: { view_type: "symptom_snapshot" },
  list_views_and_blocks: {},
  get_view_block: { view_type: "symptom_snapshot", block_id: "active_symptoms" },
  get_view_recent_events: { view_type: "symptom_snapshot" },
  get_logs: {},
  get_events: {},
  get_changes: { since: "2026-01-01" },
};

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
  a = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "A" } })).json().id;
  b = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "B" } })).json().id;
  const logs = [log(a, "2026-07-01T08:00:00Z", "tiredness", 5), log(b, "2026-07-01T08:00:00Z", "nausea", 6)];
  const seeded = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  expect(seeded.accepted, JSON.stringify(seeded.errors)).toBe(2);
  const token = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: t.auth, payload: { patient_id: a } })).json().access_token;
  client = new Client({ name: "pss-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("MCP with a patient token", () => {
  it("makes patient_id optional in every per-patient tool's schema, and offers no patient search", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([...Object.keys(TOOL_ARGS), "query_logs"].sort());
    for (const tool of tools.filter((x) => x.name !== "query_logs")) {
      expect(tool.inputSchema.properties, tool.name).toHaveProperty("patient_id");
      expect(tool.inputSchema.required ?? [], tool.name).not.toContain("patient_id");
    }
  });

  it("reads the token's own patient when patient_id is left out, in every tool", async () => {
    for (const [name, args] of Object.entries(TOOL_ARGS)) {
      const r = await call(name, args);
      expect(r.isError, `${name}: ${r.text}`).toBe(false);
      expect(r.text, name).toContain(a);
      expect(r.text, name).not.toContain(b);
    }
    expect((await call("get_event_state_module", { module_type: "symptoms" })).text).toContain("tiredness");
  });

  it("answers another patient's id as not found in every tool, without leaking it", async () => {
    for (const [name, args] of Object.entries(TOOL_ARGS)) {
      const r = await call(name, { ...args, patient_id: b });
      expect(r.isError, name).toBe(true);
      expect(r.text, name).toContain("not found");
      expect(r.text, name).not.toContain("nausea");
    }
    expect((await call("get_stable_data", { patient_id: a })).isError).toBe(false);
  });

  it("lists only its patient's resources and refuses another patient's", async () => {
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(8);
    for (const r of resources) expect(r.uri.startsWith(`patient://${a}/`), r.uri).toBe(true);
    expect(resources.map((r) => r.uri)).toEqual(expect.arrayContaining([`patient://${a}/stable`, `patient://${a}/event-modules/symptoms`, `patient://${a}/views/symptom_snapshot`]));
    expect(resources.some((r) => r.uri.startsWith("org://"))).toBe(false);
    const own = await client.readResource({ uri: `patient://${a}/event-modules/symptoms` });
    expect(JSON.parse((own.contents[0] as { text: string }).text).payload.symptoms[0].name).toBe("tiredness");
    await expect(client.readResource({ uri: `patient://${b}/event-modules/symptoms` })).rejects.toThrow(/not found/);
    await expect(client.readResource({ uri: `patient://${b}/views/symptom_snapshot` })).rejects.toThrow(/not found/);
    await expect(client.readResource({ uri: "org://log-types" })).rejects.toThrow();
    // So get_logs names the log types itself rather than sending it there.
    const logs = (await client.listTools()).tools.find((x) => x.name === "get_logs")!;
    const logTypes = JSON.stringify(logs.inputSchema.properties!.log_types);
    expect(logTypes).not.toContain("org://");
    expect(logTypes).toContain("symptom_report");
  });

  it("resolves prompts for its own patient and refuses another's", async () => {
    const p = await client.getPrompt({ name: "visit_prep_summary", arguments: {} });
    expect((p.messages[0]!.content as { text: string }).text).toContain("tiredness");
    await expect(client.getPrompt({ name: "provider_alert", arguments: { patient_id: b } })).rejects.toThrow(/not found/);
  });

  it("stops working once the patient is deleted", async () => {
    const c = await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} });
    const pid = c.json().id;
    const token = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: t.auth, payload: { patient_id: pid } })).json().access_token;
    await t.app.inject({ method: "DELETE", url: `/v1/patients/${pid}`, headers: t.auth });
    const other = new Client({ name: "pss-test", version: "1.0.0" });
    await other.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const r = (await other.callTool({ name: "get_stable_data", arguments: {} })) as { isError?: boolean; content: { text: string }[] };
    expect(r.isError).toBe(true);
    // Not "leave patient_id out": it was left out; the patient itself is gone.
    expect(r.content[0]!.text).toMatch(/bound to has been deleted/);
    expect((await other.listResources()).resources).toEqual([]);
    await other.close();
  });
});
