import { randomBytes } from "node:crypto";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES, type Scope } from "../../src/auth/scopes.js";
import { generateSecret } from "../../src/control/api-keys.js";
import { authPlugin, type RouteRule } from "../../app/http/plugins/auth.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * The authorization matrix, generated from the app's own route table (the auth plugin
 * records every route with its rule): every route, every kind of wrong caller. A route
 * added without a rule stops the app from starting; one added as public must be listed
 * here on purpose.
 */

// The upload PUT takes no bearer credential: its one-time token (from an authorized
// POST /v1/ingestion/upload-url) is the credential, as with a presigned URL.
const PUBLIC_ROUTES = ["GET /healthz", "GET /metrics", "POST /auth/token", "GET /openapi.json", "PUT /v1/ingestion/uploads/:token", "GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-protected-resource/mcp",
  "GET /.well-known/oauth-authorization-server", "POST /register", "GET /authorize", "POST /token",
  // The web console's page and assets: the page asks for a credential itself.
  "GET /console", "GET /console/*"];
const ANY_CREDENTIAL_ROUTES = ["GET /v1/log-types", "GET /v1/log-types/:log_type", "GET /v1/sdk/config", "GET /v1/auth/me"];

const MARK = `zq${randomBytes(6).toString("hex")}`;
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

let t: TestStack;
let p1: string;
let p2: string;
let keyAll: { id: string; key: string };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

interface Caller {
  name: string;
  headers: Record<string, string>;
  /** The status every scoped route must answer this caller with, when the case decides it alone. */
  status?: number;
}
const callers: Record<string, Caller> = {};
const lacking = new Map<Scope, Record<string, string>>();
let patientToken: { token: string; scopes: string[] };

async function createKey(scopes: readonly string[], project?: string): Promise<{ id: string; key: string }> {
  const r = await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: `matrix ${MARK}`, scopes, ...(project ? { project } : {}) } });
  expect(r.statusCode).toBe(201);
  return r.json();
}

beforeAll(async () => {
  t = await startStack();
  const mk = async (first_name: string) => (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name, last_name: MARK, email: `${MARK}@example.org` } })).json().id as string;
  p1 = await mk(`P1${MARK}`);
  p2 = await mk("P2");
  const log = { log_type: "symptom_report", patient_id: p1, timestamp: "2026-03-01T10:00:00Z", payload: { instrument: `clinic${MARK}`, symptoms: [{ name: `itch${MARK}`, score: 4, scale_min: 0, scale_max: 10 }] } };
  expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [log] } })).json().accepted).toBe(1);

  expect((await t.app.inject({ method: "POST", url: "/v1/projects", headers: t.auth, payload: { name: `Other ${MARK}`, slug: "matrix-b" } })).statusCode).toBe(201);
  keyAll = await createKey(SCOPES);
  const keyB = await createKey(SCOPES, "matrix-b");
  const orgC = (await t.app.inject({ method: "POST", url: "/v1/organizations", headers: t.auth, payload: { name: "Org C" } })).json();
  const revoked = await createKey(SCOPES);
  expect((await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${revoked.id}`, headers: t.auth })).statusCode).toBe(200);
  const expired = await t.services.tokens.sign({ organization_id: "org_default", project_id: null, scopes: [...SCOPES], key_id: keyAll.id }, -60, "access");
  for (const sc of [...SCOPES, "admin:organizations" as const]) lacking.set(sc, bearer((await createKey(SCOPES.filter((x) => x !== sc))).key));
  const minted = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: t.auth, payload: { patient_id: p2 } })).json();
  patientToken = { token: minted.access_token, scopes: minted.scopes };

  callers.none = { name: "no token", headers: {}, status: 401 };
  callers.wrong = { name: "wrong key", headers: bearer(generateSecret()), status: 401 };
  callers.revoked = { name: "revoked key", headers: bearer(revoked.key), status: 401 };
  callers.expired = { name: "expired JWT", headers: bearer(expired), status: 401 };
  callers.otherProject = { name: "key of another project", headers: bearer(keyB.key) };
  callers.otherOrg = { name: "key of another organization", headers: bearer(orgC.api_key) };
  callers.patientToken = { name: "patient token of another patient", headers: bearer(patientToken.token) };
});
afterAll(async () => {
  await t?.close();
});

/** The route's path with org A's resources in its parameters: the patient P1, the default project, a key of org A. */
function pathOf(url: string): string {
  return url
    .replace(":pid", p1)
    .replace(/^\/v1\/patients\/:id/, `/v1/patients/${p1}`)
    .replace(/^\/v1\/projects\/:id/, "/v1/projects/prj_default")
    .replace(/^\/v1\/api-keys\/:id/, `/v1/api-keys/${keyAll.id}`)
    .replace(":module_type", "symptoms")
    .replace(":view_type", "symptom_snapshot")
    .replace(":log_type", "symptom_report")
    .replace(/:[a-z_]+/g, "x")
    // A route's required query, so a refusal is about access, not shape.
    .concat(url === "/v1/state/:pid/diff" ? "?from=2026-01-01" : url === "/v1/state/:pid/changes" ? "?since=2026-01-01" : "");
}

/** A well-formed body naming P1 where the route takes one, so a refusal is about access, not shape. */
function bodyOf(method: string, url: string): unknown {
  const bodies: Record<string, unknown> = {
    "POST /v1/patients": { first_name: "New" },
    "POST /v1/patients/batch": { patients: [{ first_name: "New" }] },
    "PUT /v1/patients/:id": { first_name: "Changed" },
    "POST /v1/patients/:id/external-identifiers": { external_identifiers: [{ system: "mrn", value: "1" }] },
    "DELETE /v1/patients/:id/external-identifiers": { external_identifiers: [{ system: "mrn", value: "1" }] },
    "POST /v1/logs/batch": { logs: [{ log_type: "user_login", patient_id: p1, timestamp: "2026-03-02T10:00:00Z", payload: {} }] },
    "POST /v1/auth/token": { patient_id: p1 },
    "POST /v1/organizations": { name: "Nope" },
    "POST /mcp": { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_stable_data", arguments: { patient_id: p1 } } },
    "POST /v1/projects": { name: `x${randomBytes(3).toString("hex")}` },
    "PUT /v1/projects/:id": { name: "Renamed" },
    "PATCH /v1/projects/:id": { name: "Renamed" },
    "POST /v1/projects/:id/duplicate": { name: `copy${randomBytes(3).toString("hex")}` },
    "POST /v1/api-keys": { name: "x", scopes: ["sdk:state-read"] },
    "PATCH /v1/ingestion/jobs/:id": { skip_backfill: true },
  };
  const known = bodies[`${method} ${url}`];
  if (known !== undefined) return known;
  return method === "POST" || method === "PUT" ? {} : undefined;
}

async function call(rule: RouteRule, headers: Record<string, string>) {
  const payload = bodyOf(rule.method, rule.url);
  const r = await t.app.inject({
    method: rule.method as "GET",
    url: pathOf(rule.url),
    headers: { ...headers, ...(rule.url === "/mcp" ? MCP_HEADERS : {}) },
    ...(payload !== undefined ? { payload: payload as object } : {}),
  });
  return { status: r.statusCode, body: r.body };
}

const takesPatient = (url: string) => url.includes(":pid") || url.startsWith("/v1/patients/:id");
const namesP1 = (rule: RouteRule) => takesPatient(rule.url) || JSON.stringify(bodyOf(rule.method, rule.url) ?? {}).includes(p1);
const rules = () => t.app.routeRules.filter((r) => r.method !== "HEAD");
const scoped = () => rules().filter((r) => r.scope !== false && r.scope !== undefined);

/**
 * Nothing of P1 (its names, its logs) in the answer; and not even its id unless the
 * request named it. The audit trail is the exception for the id: it records the
 * caller's own earlier attempts, which named P1.
 */
function expectNoData(rule: RouteRule, body: string, where: string) {
  expect(body, where).not.toContain(MARK);
  if (!namesP1(rule) && rule.url !== "/v1/audit") expect(body, where).not.toContain(p1);
}

describe("authorization matrix", () => {
  it("knows every route: public and any-credential routes are exactly the listed ones", () => {
    const id = (r: RouteRule) => `${r.method} ${r.url}`;
    expect(rules().filter((r) => r.scope === false).map(id).sort()).toEqual([...PUBLIC_ROUTES].sort());
    expect(rules().filter((r) => r.scope === undefined).map(id).sort()).toEqual([...ANY_CREDENTIAL_ROUTES].sort());
    expect(scoped().length).toBeGreaterThan(30);
  });

  it("refuses to start when a route states no scope", async () => {
    const app = Fastify();
    await app.register(authPlugin, { services: t.services });
    const start = async () => {
      await app.register(async (i) => {
        i.get("/v1/forgotten", async () => ({ secret: true }));
      });
      await app.ready();
    };
    await expect(start()).rejects.toThrow(/GET \/v1\/forgotten states no config.scope/);
    await app.close();
  });

  it("the admin sees P1's data, so the markers below would show a leak", async () => {
    const r = await t.app.inject({ method: "GET", url: `/v1/state/${p1}/event-modules/symptoms`, headers: t.auth });
    expect(r.body).toContain(MARK);
  });

  it.each(["none", "wrong", "revoked", "expired"])("answers 401 with no data to every scoped route for: %s", async (c) => {
    for (const rule of scoped()) {
      const { status, body } = await call(rule, callers[c]!.headers);
      expect(status, `${rule.method} ${rule.url} (${callers[c]!.name})`).toBe(401);
      expectNoData(rule, body, `${rule.method} ${rule.url}`);
    }
  });

  it("answers 401 to any-credential routes without a valid credential, and 200 with one", async () => {
    for (const rule of rules().filter((r) => r.scope === undefined)) {
      for (const c of ["none", "wrong", "revoked", "expired"]) expect((await call(rule, callers[c]!.headers)).status, `${rule.url} ${c}`).toBe(401);
      for (const c of ["otherProject", "otherOrg", "patientToken"]) expect((await call(rule, callers[c]!.headers)).status, `${rule.url} ${c}`).toBe(200);
    }
  });

  it("answers 403 with no data to a key lacking the route's scope", async () => {
    for (const rule of scoped()) {
      const { status, body } = await call(rule, lacking.get(rule.scope as Scope)!);
      expect(status, `${rule.method} ${rule.url}`).toBe(403);
      expect(JSON.parse(body)).toMatchObject({ error: true, error_type: "authorization_error" });
      expectNoData(rule, body, `${rule.method} ${rule.url}`);
    }
  });

  it("answers 403 missing_scope, with no data, to a key holding the route's scope but lacking one it also needs", async () => {
    const needing = scoped().filter((r) => r.alsoScopes.length > 0);
    expect(needing.map((r) => `${r.method} ${r.url}`)).toContain("GET /v1/ingestion/jobs/:id/preview");
    for (const rule of needing) {
      for (const also of rule.alsoScopes) {
        const { status, body } = await call(rule, lacking.get(also)!);
        expect(status, `${rule.method} ${rule.url}`).toBe(403);
        expect(JSON.parse(body)).toMatchObject({ error_type: "authorization_error", details: [{ type: "missing_scope", required_scope: also }] });
        expectNoData(rule, body, `${rule.method} ${rule.url}`);
      }
    }
  });

  it("answers a key of another project with 404 for P1, 403 for org-wide routes, and never P1's data", async () => {
    for (const rule of scoped()) {
      const { status, body } = await call(rule, callers.otherProject!.headers);
      const where = `${rule.method} ${rule.url}`;
      if (rule.orgWide || rule.scope === "admin:organizations") expect(status, where).toBe(403);
      else if (takesPatient(rule.url)) expect(status, where).toBe(404);
      else expect(status, where).toBeLessThan(500);
      expectNoData(rule, body, where);
    }
  });

  it("answers a key of another organization with 404 for org A's resources, and never their data", async () => {
    for (const rule of scoped()) {
      const { status, body } = await call(rule, callers.otherOrg!.headers);
      const where = `${rule.method} ${rule.url}`;
      if (rule.scope === "admin:organizations") expect(status, where).toBe(403);
      else if (takesPatient(rule.url) || /:id/.test(rule.url)) expect(status, where).toBe(404);
      else expect(status, where).toBeLessThan(500);
      expectNoData(rule, body, where);
    }
  });

  it("answers a patient token naming another patient with 404 (or 403 without the scope)", async () => {
    for (const rule of scoped().filter((r) => takesPatient(r.url))) {
      const { status, body } = await call(rule, callers.patientToken!.headers);
      expect(status, `${rule.method} ${rule.url}`).toBe(patientToken.scopes.includes(rule.scope as string) ? 404 : 403);
      expectNoData(rule, body, `${rule.method} ${rule.url}`);
    }
  });

  it("stores nothing for P1 from a log batch sent with another project's or patient's credential", async () => {
    for (const c of ["otherProject", "otherOrg", "patientToken"]) {
      const r = await call({ method: "POST", url: "/v1/logs/batch", scope: "sdk:event-log", alsoScopes: [], orgWide: false }, callers[c]!.headers);
      expect(JSON.parse(r.body), c).toMatchObject({ accepted: 0, failed: 1 });
    }
  });

  it("answers every MCP tool called for P1 by another project, organization or patient with a tool error and no data", async () => {
    const mcp = (headers: Record<string, string>, name: string, args: Record<string, unknown>) =>
      t.app.inject({ method: "POST", url: "/mcp", headers: { ...headers, ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name, arguments: args } } });
    const list = await t.app.inject({ method: "POST", url: "/mcp", headers: { ...t.auth, ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    const tools = list.json().result.tools as { name: string; inputSchema: { required?: string[]; properties?: Record<string, unknown> } }[];
    expect(tools.length).toBeGreaterThanOrEqual(9);
    const extra: Record<string, string> = { module_type: "symptoms", view_type: "symptom_snapshot", block_id: "active_symptoms" };
    /** The tools over the whole project (no patient_id), with arguments that find P1 for its own project's caller. */
    const projectWide: Record<string, Record<string, unknown>> = {
      find_patient: { name: MARK },
      query_logs: { filter: [{ field: "payload.instrument", op: "eq", value: `clinic${MARK}` }] },
    };
    const own = await mcp(t.auth, "get_event_state_module", { patient_id: p1, module_type: "symptoms" });
    expect(own.body, "the admin's own call shows the marker").toContain(MARK);
    for (const tool of tools) {
      const wide = tool.inputSchema.properties?.patient_id === undefined;
      if (wide) expect(Object.keys(projectWide), `${tool.name} takes no patient_id: give it arguments that find P1`).toContain(tool.name);
      const args: Record<string, unknown> = wide ? projectWide[tool.name]! : { patient_id: p1 };
      if (!wide) for (const req of tool.inputSchema.required ?? []) if (extra[req]) args[req] = extra[req]!;
      if (wide) expect((await mcp(t.auth, tool.name, args)).body, `${tool.name}: the admin's own call shows the marker`).toContain(MARK);
      for (const c of ["otherProject", "otherOrg", "patientToken"]) {
        const r = await mcp(callers[c]!.headers, tool.name, args);
        const where = `${tool.name} (${callers[c]!.name})`;
        expect(r.statusCode, where).toBe(200);
        // A project-wide tool may answer another project's caller with nothing found.
        if (!wide) expect(r.json().result?.isError ?? r.json().error !== undefined, where).toBe(true);
        expect(r.body, where).not.toContain(MARK);
      }
    }
  });
});
