import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { generateSecret } from "../../src/control/api-keys.js";
import { callTool, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let base: string;
let pid: string;
let logIds: string[];
let client: Client;

const connect = (token: string): Promise<Client> => connectMcp(base, token);
const call = (name: string, args: Record<string, unknown> = {}, c = client) => callTool(c, name, args);

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const addr = t.app.server.address() as { port: number };
  base = `http://127.0.0.1:${addr.port}`;
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const logs = [
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-01T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 8 }] }, trace: "visit-1" },
    { log_type: "symptom_report", patient_id: pid, timestamp: "2026-07-03T08:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 9 }] } },
    { log_type: "medication_list_update", patient_id: pid, timestamp: "2026-07-01T09:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"] }] } },
    { log_type: "lab_results", patient_id: pid, timestamp: "2026-07-02T07:00:00Z", payload: { results: [{ loinc_code: "2823-3", test_name: "Potassium", value_numeric: 6.9, unit: "mmol/L", abnormal_flag: "HH" }] } },
    { log_type: "medication_adherence", patient_id: pid, timestamp: "2026-07-02T08:30:00Z", payload: { medication_adherence: [{ status: "skipped", rxnorm_cui: "860975", scheduled_time: "2026-07-02T08:00:00Z" }] } },
    { log_type: "user_login", patient_id: pid, timestamp: "2026-07-02T10:00:00Z", payload: {} },
  ];
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  expect(r.accepted).toBe(logs.length);
  logIds = r.results.map((x: { id: string }) => x.id);
  client = await connect(t.adminKey);
});
afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("MCP tools over streamable HTTP", () => {
  it("lists the twelve tools with JSON Schemas and descriptions, patient_id required by the per-patient ones for an API key", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([
      "find_patient", "get_changes", "get_event_state_module", "get_events", "get_logs", "get_stable_data", "get_view", "get_view_block",
      "get_view_recent_events", "list_event_state_modules", "list_views_and_blocks", "query_logs",
    ]);
    const projectWide = ["find_patient", "query_logs"];
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(150);
      expect(tool.annotations).toMatchObject({ readOnlyHint: true });
      if (projectWide.includes(tool.name)) {
        // Closed, so a stray patient_id is refused rather than dropped (which would widen the answer).
        expect(tool.inputSchema, tool.name).toMatchObject({ type: "object", additionalProperties: false });
        expect(tool.inputSchema.properties, tool.name).not.toHaveProperty("patient_id");
      } else {
        expect(tool.inputSchema).toMatchObject({ type: "object", properties: { patient_id: { type: "string" } }, required: expect.arrayContaining(["patient_id"]) });
      }
    }
    const view = tools.find((x) => x.name === "get_view")!;
    expect(view.inputSchema.properties).toMatchObject({ view_type: { enum: expect.arrayContaining(["symptom_snapshot"]) }, format: { enum: ["markdown", "raw"] } });
    const logs = tools.find((x) => x.name === "get_logs")!;
    expect(Object.keys(logs.inputSchema.properties!).sort()).toEqual(["cursor", "limit", "log_ids", "log_types", "patient_id", "since", "trace", "until"]);
  });

  it("get_stable_data answers the REST shape, filtered by modules", async () => {
    const r = await call("get_stable_data", { patient_id: pid, modules: ["medications"] });
    expect(r.isError).toBe(false);
    expect(Object.keys(r.json.modules)).toEqual(["medications"]);
    expect(r.json.modules.medications.payload.medications[0]).toMatchObject({ medication_name: "Metformin", rxnorm_cui: "860975" });
  });

  it("lists event-state modules and reads one", async () => {
    const list = await call("list_event_state_modules", { patient_id: pid });
    expect(list.json.modules.map((m: any) => m.module_type)).toEqual(expect.arrayContaining(["symptoms", "lab_results", "adherence", "engagement"]));
    const sym = await call("get_event_state_module", { patient_id: pid, module_type: "symptoms" });
    expect(sym.json).toMatchObject({ patient_id: pid, module_type: "symptoms" });
    expect(sym.json.payload.symptoms[0]).toMatchObject({ name: "pain", current_score: 9, status: "active" });
    expect(sym.json.payload.symptoms[0].history.map((h: any) => h.log_id)).toEqual([logIds[0], logIds[1]]);
  });

  it("get_view answers raw blocks whose refs name the logs, and markdown with the log ids", async () => {
    const raw = await call("get_view", { patient_id: pid, view_type: "symptom_snapshot" });
    expect(raw.json).toMatchObject({ patient_id: pid, view_type: "symptom_snapshot", view_id: expect.stringMatching(/^symptom_snapshot:/) });
    for (const b of [...raw.json.content.blocks, ...raw.json.content.temp]) expect(b.refs.length, b.id).toBeGreaterThan(0);
    expect(raw.json.content.blocks.flatMap((b: any) => b.refs)).toEqual(expect.arrayContaining([logIds[0], logIds[1]]));
    const md = await call("get_view", { patient_id: pid, view_type: "labs_snapshot", format: "markdown" });
    expect(md.isError).toBe(false);
    expect(md.text).toMatch(/^# Labs snapshot/);
    expect(md.text).toContain("Potassium");
    expect(md.text).toContain(logIds[3]);
  });

  it("lists views with their blocks and reads one block with its refs", async () => {
    const all = await call("list_views_and_blocks", { patient_id: pid });
    const med = all.json.views.find((v: any) => v.view_type === "medication_snapshot");
    expect(med).toMatchObject({ has_blocks: true, has_temp: true });
    expect(med.blocks.map((b: any) => b.block_id)).toContain("missed_doses");
    const one = await call("list_views_and_blocks", { patient_id: pid, view_type: "labs_snapshot" });
    expect(one.json).toMatchObject({ patient_id: pid, view_type: "labs_snapshot" });
    expect(one.json.blocks.map((b: any) => b.block_id)).toContain("critical_values");
    const block = await call("get_view_block", { patient_id: pid, view_type: "medication_snapshot", block_id: "missed_doses" });
    // The listing whose schedule shows the doses never reported in the week up to the read;
    // the dose skipped in July is months before it.
    expect(block.json).toMatchObject({ block_id: "missed_doses", segment: "temp", content: expect.stringContaining("Metformin") });
    expect(block.json.refs).toEqual([logIds[2]]);
  });

  it("get_view_recent_events answers newest first with log ids and a default limit of 10", async () => {
    const r = await call("get_view_recent_events", { patient_id: pid, view_type: "symptom_snapshot" });
    expect(r.json).toMatchObject({ patient_id: pid, view_type: "symptom_snapshot", count: 2, total_count: 2 });
    expect(r.json.entries.map((e: any) => e.log_id)).toEqual([logIds[1], logIds[0]]);
    const one = await call("get_view_recent_events", { patient_id: pid, view_type: "symptom_snapshot", limit: 1 });
    expect(one.json).toMatchObject({ count: 1, total_count: 2 });
  });

  it("get_logs pages newest first with a cursor and filters by type, trace and time", async () => {
    const p1 = await call("get_logs", { patient_id: pid, limit: 4 });
    expect(p1.json).toMatchObject({ patient_id: pid, count: 4, next_cursor: expect.any(String) });
    expect(p1.json.logs[0]).toMatchObject({ id: logIds[1], type: "symptom_report", timestamp: "2026-07-03T08:00:00.000Z" });
    const p2 = await call("get_logs", { patient_id: pid, limit: 4, cursor: p1.json.next_cursor });
    expect(p2.json).toMatchObject({ count: 2, next_cursor: null });
    expect((await call("get_logs", { patient_id: pid, log_types: ["lab_results"] })).json.logs.map((l: any) => l.id)).toEqual([logIds[3]]);
    expect((await call("get_logs", { patient_id: pid, trace: "visit-1" })).json.logs.map((l: any) => l.id)).toEqual([logIds[0]]);
    const window = await call("get_logs", { patient_id: pid, since: "2026-07-02T09:00:00Z", until: "2026-07-02T23:00:00Z" });
    expect(window.json.logs.map((l: any) => l.type)).toEqual(["user_login"]);
    // The forms REST takes: a bare date (UTC midnight), a time without seconds, any offset.
    const sameWindow = await call("get_logs", { patient_id: pid, since: "2026-07-02T11:00+02:00", until: "2026-07-02T23:00Z" });
    expect(sameWindow.json.logs.map((l: any) => l.type)).toEqual(["user_login"]);
    const fromDate = await call("get_logs", { patient_id: pid, since: "2026-07-03" });
    expect(fromDate.json.logs.map((l: any) => l.id)).toEqual([logIds[1]]);
    const events = await call("get_events", { patient_id: pid, since: "2020-01-01", until: "2099-12-31T00:00Z" });
    expect(events.json.count).toBe(6);
    expect((await call("get_logs", { patient_id: pid })).json.count).toBe(6);
    // An empty list filters nothing, as REST's empty ?log_types= does.
    expect((await call("get_logs", { patient_id: pid, log_types: [] })).json.count).toBe(6);
  });

  it("get_events pages the audit with a cursor", async () => {
    const e1 = await call("get_events", { patient_id: pid, limit: 4 });
    expect(e1.json).toMatchObject({ patient_id: pid, count: 4, next_cursor: expect.stringMatching(/^[A-Za-z0-9_-]+$/) });
    expect(e1.json.events[0]).toMatchObject({ trigger: "log", source_event_log_id: expect.stringMatching(/^log_/) });
    const e2 = await call("get_events", { patient_id: pid, limit: 4, cursor: e1.json.next_cursor });
    expect(e2.json).toMatchObject({ count: 2, next_cursor: null });
  });
});

describe("MCP bad arguments and domain failures", () => {
  it("answers an unknown module, view or block as a tool error listing the valid values", async () => {
    const mod = await call("get_event_state_module", { patient_id: pid, module_type: "moonphase" });
    expect(mod.isError).toBe(true);
    expect(mod.text).toContain("lab_results");
    const view = await call("get_view", { patient_id: pid, view_type: "horoscope" });
    expect(view.isError).toBe(true);
    expect(view.text).toContain("symptom_snapshot");
    const block = await call("get_view_block", { patient_id: pid, view_type: "labs_snapshot", block_id: "nope" });
    expect(block).toMatchObject({ isError: true, text: expect.stringContaining("critical_values") });
    const types = await call("get_logs", { patient_id: pid, log_types: ["horoscope_reading"] });
    expect(types).toMatchObject({ isError: true, text: expect.stringContaining("symptom_report") });
  });

  it("refuses an invalid format, a bad time and a bad cursor as tool errors", async () => {
    expect((await call("get_view", { patient_id: pid, view_type: "labs_snapshot", format: "pdf" })).isError).toBe(true);
    const bad = await call("get_logs", { patient_id: pid, since: "yesterday" });
    expect(bad).toMatchObject({ isError: true, text: expect.stringContaining("2026-07-01T09:30Z") });
    expect((await call("get_logs", { patient_id: pid, until: "2026-02-30" })).text).toContain("real calendar date");
    // A real day without its offset is told the form only, not that its day does not exist.
    const zoneless = (await call("get_event_state_module", { patient_id: pid, module_type: "symptoms", as_of: "2026-11-24T12:00:00" })).text;
    expect(zoneless).toContain("with a UTC offset");
    expect(zoneless).not.toContain("real calendar date");
    // The schema says which forms it takes.
    const { tools } = await client.listTools();
    const since = (tools.find((x) => x.name === "get_logs")!.inputSchema.properties as Record<string, { description: string; pattern?: string }>).since!;
    expect(since.description).toContain("a date (2026-07-01: UTC midnight)");
    expect(since.pattern).toBeDefined();
    const cursor = await call("get_logs", { patient_id: pid, cursor: "garbage" });
    expect(cursor).toMatchObject({ isError: true, text: expect.stringContaining("cursor") });
    expect((await call("get_logs", { patient_id: pid, limit: 1000 })).isError).toBe(true);
  });

  it("answers a tool it does not have as a JSON-RPC error (-32602) naming its tools, and promises no list changes", async () => {
    const err = await client.callTool({ name: "get_horoscope", arguments: { patient_id: pid } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(-32602);
    expect((err as McpError).message).toContain("get_stable_data");
    // Bad arguments stay a tool result a model can correct, naming the argument.
    const bad = await call("get_view", { patient_id: pid, view_type: "labs_snapshot", format: "pdf" });
    expect(bad).toMatchObject({ isError: true, text: expect.stringContaining("Invalid arguments for tool get_view") });
    expect(bad.text).toContain("format");
    // One server per request, no stream: nothing could ever send list_changed.
    const caps = client.getServerCapabilities()!;
    expect([caps.tools?.listChanged, caps.resources?.listChanged, caps.prompts?.listChanged]).toEqual([false, false, false]);
  });

  it("answers an unknown patient, or none given, as a tool error", async () => {
    const r = await call("get_stable_data", { patient_id: "pat_00000000000000000000000000" });
    expect(r).toMatchObject({ isError: true, text: expect.stringContaining("not found") });
    expect((await call("get_stable_data", {})).isError).toBe(true);
  });
});

describe("MCP authentication", () => {
  it("answers 401 with the spec's error body without a token, and the SDK client fails to connect", async () => {
    const r = await fetch(`${base}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ error: true, status_code: 401, error_type: "authentication_error" });
    const err = await connect("not-a-key").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StreamableHTTPError);
    expect((err as StreamableHTTPError).code).toBe(401);
  });

  it("says in every 401 which scheme to use and where its protected-resource metadata is (RFC 9110, 6750, 9728)", async () => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const none = await fetch(`${base}/mcp`, { method: "POST", headers, body: "{}" });
    // Without a credential: the challenge alone, no error code (RFC 6750 3.1).
    expect(none.headers.get("www-authenticate")).toBe(`Bearer realm="patient-state-service", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
    const bad = await fetch(`${base}/mcp`, { method: "POST", headers: { ...headers, authorization: "Bearer not-a-key" }, body: "{}" });
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toBe(
      `Bearer realm="patient-state-service", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="invalid or revoked API key"`,
    );
    const expired = await fetch(`${base}/v1/patients`, { headers: { authorization: "Bearer a.b.c" } });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource", error="invalid_token", error_description="invalid or expired token"`);

    const mcp = await fetch(`${base}/.well-known/oauth-protected-resource/mcp`);
    expect(mcp.status).toBe(200);
    expect(await mcp.json()).toEqual({
      resource: `${base}/mcp`,
      resource_name: "Patient State Service MCP server",
      bearer_methods_supported: ["header"],
      scopes_supported: expect.arrayContaining(["mcp:patient-state", "sdk:state-read"]),
      resource_documentation: `${base}/openapi.json`,
    });
    expect((await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()).resource).toBe(base);
    // Clients that fall back to OAuth on this server (mcp-remote registers a client) are told what to send instead.
    for (const [method, path] of [["POST", "/register"], ["GET", "/.well-known/oauth-authorization-server"], ["GET", "/authorize"], ["POST", "/token"]] as const) {
      const r = await fetch(`${base}${path}`, { method, ...(method === "POST" ? { headers: { "content-type": "application/json" }, body: "{}" } : {}) });
      expect(r.status, path).toBe(404);
      expect((await r.json()).message, path).toContain("not an OAuth authorization server: send an API key, or a JWT from POST /auth/token,");
    }
  });

  it("answers 403 to a key without mcp:patient-state", async () => {
    const secret = generateSecret();
    await t.services.apiKeys.create({ organization_id: "org_default", project_id: null, name: "reader", scopes: ["sdk:state-read"] }, secret);
    const err = await connect(secret).catch((e: unknown) => e);
    expect((err as StreamableHTTPError).code).toBe(403);
  });

  it("accepts a JWT from /auth/token", async () => {
    const jwt = (await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: t.adminKey } })).json().access_token;
    const c = await connect(jwt);
    expect((await call("get_stable_data", { patient_id: pid }, c)).isError).toBe(false);
    await c.close();
  });

  it("answers missing params as invalid params, and protocol errors without a doubled prefix, inside a 200 by id", async () => {
    const headers = { authorization: `Bearer ${t.adminKey}`, accept: "application/json, text/event-stream", "content-type": "application/json" };
    for (const params of [undefined, { name: "get_logs", arguments: "x" }]) {
      const r = await fetch(`${base}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params }) });
      expect(await r.json()).toMatchObject({ jsonrpc: "2.0", id: 9, error: { code: -32602, message: expect.stringContaining("tools/call") } });
    }
    const completion = await fetch(`${base}/mcp`, {
      method: "POST", headers,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "completion/complete", params: { ref: { type: "ref/prompt", name: "missing_data_elicitation" }, argument: { name: "view_type", value: "med" } } }),
    });
    expect((await completion.json()).result.completion.values).toEqual(["medication_snapshot"]);
    const read = await fetch(`${base}/mcp`, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "patient://pat_nobody/stable" } }) });
    const body = await read.json();
    expect(body.error.code).toBe(-32002);
    expect(body.error.message).toMatch(/^patient pat_nobody not found/);
  });

  it("answers GET and DELETE /mcp with 405 (stateless server)", async () => {
    for (const method of ["GET", "DELETE"]) {
      const r = await fetch(`${base}/mcp`, { method, headers: { authorization: `Bearer ${t.adminKey}`, accept: "text/event-stream" } });
      expect(r.status, method).toBe(405);
      expect(r.headers.get("allow")).toBe("POST");
      expect(await r.json()).toMatchObject({ error: true, status_code: 405 });
    }
  });
});
