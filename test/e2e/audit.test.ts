import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let pid: string;
let reader: { id: string; key: string };
let patientToken: string;
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Entry {
  id: string;
  at: string;
  organization_id: string;
  project_id: string;
  key_id: string;
  credential: string;
  method: string;
  route: string;
  tool: string | null;
  patient_id: string | null;
  patient_ids: string[];
  status: number;
}

/** Reads the trail until `want` entries match (auditing is asynchronous). */
async function audit(query: string, want: (e: Entry[]) => boolean = () => true, headers = t.auth): Promise<{ entries: Entry[]; next_cursor: string | null }> {
  const until = Date.now() + 5_000;
  for (;;) {
    const r = await t.app.inject({ method: "GET", url: `/v1/audit${query}`, headers });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    if (want(body.entries) || Date.now() > until) return body;
    await new Promise((res) => setTimeout(res, 50));
  }
}

beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "Audrey" } })).json().id;
  reader = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "reader", scopes: ["sdk:state-read", "mcp:patient-state", "sdk:patient-token"] } })).json();
  patientToken = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: bearer(reader.key), payload: { patient_id: pid } })).json().access_token;
});
afterAll(async () => {
  await t?.close();
});

describe("audit trail", () => {
  it("records a patient's creation, its log writes and every read of its state, with who did it", async () => {
    const logs = [{ log_type: "user_login", patient_id: pid, timestamp: "2026-03-01T10:00:00Z", payload: {} }];
    expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json().accepted).toBe(1);
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${pid}/stable`, headers: bearer(reader.key) })).statusCode).toBe(200);
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${pid}/logs`, headers: bearer(patientToken) })).statusCode).toBe(200);
    expect((await t.app.inject({ method: "PUT", url: `/v1/patients/${pid}`, headers: t.auth, payload: { last_name: "Hepburn" } })).statusCode).toBe(200);

    const { entries } = await audit(`?patient_id=${pid}`, (e) => e.length >= 6);
    const find = (method: string, route: string) => entries.find((e) => e.method === method && e.route === route);
    expect(find("POST", "/v1/patients")).toMatchObject({ key_id: "key_admin", credential: "api_key", status: 201, patient_id: pid, organization_id: "org_default", project_id: "prj_default" });
    expect(find("POST", "/v1/auth/token")).toMatchObject({ key_id: reader.id, status: 200, patient_id: pid });
    expect(find("POST", "/v1/logs/batch")).toMatchObject({ key_id: "key_admin", status: 200, patient_ids: [pid] });
    expect(find("GET", "/v1/state/:pid/stable")).toMatchObject({ key_id: reader.id, credential: "api_key", status: 200, patient_id: pid });
    expect(find("GET", "/v1/state/:pid/logs")).toMatchObject({ key_id: reader.id, credential: "patient_token", status: 200, patient_id: pid });
    expect(find("PUT", "/v1/patients/:id")).toMatchObject({ status: 200, patient_id: pid });
    for (const e of entries) expect(Date.parse(e.at)).not.toBeNaN();
  });

  it("records each MCP tool call with the tool and the patient, for API keys and patient tokens", async () => {
    const call = (headers: Record<string, string>, args: Record<string, unknown>) =>
      t.app.inject({ method: "POST", url: "/mcp", headers: { ...headers, ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_stable_data", arguments: args } } });
    expect((await call(bearer(reader.key), { patient_id: pid })).statusCode).toBe(200);
    expect((await call(bearer(patientToken), {})).statusCode).toBe(200);
    const { entries } = await audit(`?patient_id=${pid}`, (e) => e.filter((x) => x.route === "/mcp").length >= 2);
    const mcp = entries.filter((e) => e.route === "/mcp");
    expect(mcp.map((e) => [e.tool, e.credential, e.patient_id])).toEqual([
      ["tools/call get_stable_data", "api_key", pid],
      ["tools/call get_stable_data", "patient_token", pid],
    ]);
  });

  it("records refusals after authentication (404 for another patient) but not requests that could not be authenticated", async () => {
    const other = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${other}/stable`, headers: bearer(patientToken) })).statusCode).toBe(404);
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${other}/stable`, headers: bearer("pss_wrong") })).statusCode).toBe(401);
    const { entries } = await audit(`?patient_id=${other}`, (e) => e.some((x) => x.status === 404));
    expect(entries.filter((e) => e.route === "/v1/state/:pid/stable").map((e) => [e.status, e.credential])).toEqual([[404, "patient_token"]]);
  });

  it("records an MCP call refused inside a 200 as what it came to: 404 for another patient, 422 for bad arguments", async () => {
    const other = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const call = (headers: Record<string, string>, id: number, name: string, args: Record<string, unknown>) =>
      t.app.inject({ method: "POST", url: "/mcp", headers: { ...headers, ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } } });
    const refused = await call(bearer(patientToken), 7, "get_stable_data", { patient_id: other });
    expect(refused.statusCode).toBe(200);
    expect(refused.json().result.isError).toBe(true);
    expect((await call(bearer(reader.key), 8, "get_event_state_module", { patient_id: other, module_type: "nope" })).json().result.isError).toBe(true);
    const read = await t.app.inject({
      method: "POST", url: "/mcp", headers: { ...bearer(reader.key), ...MCP_HEADERS },
      payload: [
        { jsonrpc: "2.0", id: "a", method: "resources/read", params: { uri: `patient://${other}/stable` } },
        { jsonrpc: "2.0", id: "b", method: "resources/read", params: { uri: "patient://pat_nobody/stable" } },
      ],
    });
    expect(read.statusCode).toBe(200);
    const { entries } = await audit(`?patient_id=${other}`, (e) => e.filter((x) => x.route === "/mcp").length >= 3);
    expect(entries.filter((e) => e.route === "/mcp").map((e) => [e.tool, e.credential, e.status])).toEqual([
      ["tools/call get_stable_data", "patient_token", 404],
      ["tools/call get_event_state_module", "api_key", 422],
      [`resources/read patient://${other}/stable`, "api_key", 200],
    ]);
    const nobody = await audit("?patient_id=pat_nobody", (e) => e.length >= 1);
    expect(nobody.entries.map((e) => e.status)).toEqual([404]);
  });

  it("records a query_logs call with the cohort it names, and a find_patient refused for want of its scope as a 403", async () => {
    const other = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const call = (id: number, name: string, args: Record<string, unknown>) =>
      t.app.inject({ method: "POST", url: "/mcp", headers: { ...bearer(reader.key), ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } } });
    expect((await call(1, "query_logs", { count: true, patient_ids: [pid, other] })).json().result.isError).toBeUndefined();
    // The reader key lacks api:manage-patients, which GET /v1/patients (find_patient's twin) needs.
    expect((await call(2, "find_patient", { name: "Audrey" })).json().result.isError).toBe(true);
    const { entries } = await audit("?limit=1000", (e) => e.filter((x) => x.tool === "tools/call find_patient").length >= 1);
    expect(entries.find((e) => e.tool === "tools/call query_logs")).toMatchObject({ status: 200, patient_ids: [pid, other] });
    expect(entries.find((e) => e.tool === "tools/call find_patient")).toMatchObject({ status: 403, patient_ids: [] });
  });

  it("records key and project management", async () => {
    const k = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "temp", scopes: ["sdk:event-log"] } })).json();
    await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${k.id}`, headers: t.auth });
    await t.app.inject({ method: "POST", url: "/v1/projects", headers: t.auth, payload: { name: "Audited" } });
    const { entries } = await audit("?limit=1000", (e) => e.some((x) => x.route === "/v1/projects"));
    const routes = entries.map((e) => `${e.method} ${e.route} ${e.status}`);
    expect(routes).toEqual(expect.arrayContaining(["POST /v1/api-keys 201", "DELETE /v1/api-keys/:id 200", "POST /v1/projects 201"]));
  });

  it("pages with limit and cursor, and filters by time", async () => {
    const all = (await audit("?limit=1000")).entries;
    expect(all.length).toBeGreaterThan(5);
    const ids = all.map((e) => Number(e.id));
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: Entry[]; next_cursor: string | null } = await audit(`?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.entries.map((e) => e.id));
      cursor = page.next_cursor;
    } while (cursor !== null && seen.length <= all.length);
    expect(seen.slice(0, all.length)).toEqual(all.map((e) => e.id));

    const mid = all[Math.floor(all.length / 2)]!.at;
    const since = (await audit(`?since=${encodeURIComponent(mid)}&limit=1000`)).entries;
    expect(since.length).toBeGreaterThan(0);
    expect(since.every((e) => e.at >= mid)).toBe(true);
    const until = (await audit(`?until=${encodeURIComponent(mid)}&limit=1000`)).entries;
    expect(until.every((e) => e.at <= mid)).toBe(true);
    expect(until.length + since.length).toBeGreaterThanOrEqual(all.length);
    expect((await audit(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).entries).toEqual([]);
  });

  it("filters by API key (a token counts as its parent key) and by route pattern", async () => {
    await t.app.inject({ method: "GET", url: `/v1/state/${pid}/views`, headers: bearer(reader.key) });
    await t.app.inject({ method: "GET", url: `/v1/state/${pid}/views`, headers: bearer(patientToken) });
    const views = (e: Entry[]) => e.filter((x) => x.route === "/v1/state/:pid/views").length >= 2;
    const byKey = (await audit(`?key_id=${reader.id}&limit=1000`, views)).entries;
    expect(byKey.length).toBeGreaterThan(0);
    expect(byKey.every((e) => e.key_id === reader.id)).toBe(true);
    // The patient token minted from the reader key is filed under it too.
    expect(byKey.some((e) => e.credential === "patient_token")).toBe(true);
    const byRoute = (await audit(`?route=${encodeURIComponent("/v1/api-keys/:id")}&limit=1000`, (e) => e.length > 0)).entries;
    expect(byRoute.length).toBeGreaterThan(0);
    expect(byRoute.every((e) => e.route === "/v1/api-keys/:id")).toBe(true);
    expect((await audit("?key_id=key_nobody")).entries).toEqual([]);
  });

  it("is readable only by org-wide keys with api:manage-projects, and only for their organization", async () => {
    expect((await t.app.inject({ method: "GET", url: "/v1/audit", headers: bearer(reader.key) })).statusCode).toBe(403);
    const org = (await t.app.inject({ method: "POST", url: "/v1/organizations", headers: t.auth, payload: { name: "Elsewhere" } })).json();
    const theirs = await t.app.inject({ method: "GET", url: "/v1/audit?limit=1000", headers: bearer(org.api_key) });
    expect(theirs.statusCode).toBe(200);
    expect(theirs.body).not.toContain(pid);
    expect(theirs.json().entries.every((e: Entry) => e.organization_id === org.id)).toBe(true);
  });

  it("is append-only: JetStream refuses to delete or purge its entries", async () => {
    const { jsm, names } = t.services.topology;
    const first = (await audit("?limit=1")).entries[0]!;
    await expect(jsm.streams.deleteMessage(names.auditStream, Number(first.id))).rejects.toThrow();
    await expect(jsm.streams.purge(names.auditStream)).rejects.toThrow();
    expect((await audit("?limit=1")).entries[0]!.id).toBe(first.id);
  });
});
