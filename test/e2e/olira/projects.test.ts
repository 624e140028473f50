import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCOPES } from "../../../src/auth/scopes.js";
import { startStack, type TestStack } from "../../support/stack.js";
import { def, expectSdkParses, opt, req, sdkClient, sdkOutcome, type SdkClient, type Shape } from "../../support/olira-sdk.js";

/**
 * The project routes as the hosted product's Python SDK (olira 1.11) calls them
 * (olira-compat §9) with an org-wide key: its bodies (only the fields the caller gave),
 * no body at all on deprecate, restore and delete, and every field its Project model
 * parses. The permanent deletion's erasure is in projects-delete.test.ts.
 */

let t: TestStack;
let sdk: SdkClient;
beforeAll(async () => {
  t = await startStack();
  sdk = sdkClient(t.app, t.adminKey);
});
afterAll(async () => {
  await t?.close();
});

const Project: Shape = {
  id: req("string"),
  name: req("string"),
  slug: req("string"),
  description: opt("string"),
  environment: opt("string"),
  created_at: opt("string"),
  deprecated_at: opt("string"),
  status: def("string"),
  is_default: def("bool"),
};
const ProjectList: Shape = { data: req("list", { of: Project }) };

async function created(body: Record<string, unknown>) {
  const r = await sdk.post("/v1/projects", body);
  expect(r.statusCode, r.body).toBe(201);
  expectSdkParses(r.json(), Project);
  return r.json();
}

describe("project routes as the SDK calls them", () => {
  it("lists the organization's projects under data, the same list as projects, each parseable as a Project", async () => {
    await created({ name: "Listed", slug: "listed", environment: "dev" });
    const r = await sdk.get("/v1/projects");
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expectSdkParses(body, ProjectList);
    expect(body.data).toEqual(body.projects);
    expect(body.total).toBe(body.data.length);
    expect(body.data.find((p: { slug: string }) => p.slug === "default")).toMatchObject({ is_default: true, status: "active", description: null, environment: null });
    expect(body.data.find((p: { slug: string }) => p.slug === "listed")).toMatchObject({ is_default: false, status: "active", environment: "dev" });
  });

  it("stores and echoes description and environment on create, and derives the slug from the name when none is sent", async () => {
    const p = await created({ name: "Dev Sandbox", slug: "dev-sandbox", description: "Made by the SDK example", environment: "dev" });
    expect(p).toMatchObject({ name: "Dev Sandbox", slug: "dev-sandbox", description: "Made by the SDK example", environment: "dev", status: "active", is_default: false, deprecated_at: null });
    expect(typeof p.created_at).toBe("string");
    for (const ref of [p.id, "dev-sandbox"]) {
      const got = await sdk.get(`/v1/projects/${ref}`);
      expectSdkParses(got.json(), Project);
      expect(got.json()).toEqual(p);
    }
    const bare = await created({ name: "Oncology Trial 7" });
    expect(bare).toMatchObject({ slug: "oncology-trial-7", description: null, environment: null });
  });

  it("refuses a description over 2,000 characters or an environment over 64 with 422, naming the field", async () => {
    for (const [field, value] of [["description", "x".repeat(2001)], ["environment", "e".repeat(65)]] as const) {
      const r = await sdk.post("/v1/projects", { name: "Too long", [field]: value });
      expect(r.statusCode).toBe(422);
      expect(sdkOutcome(r.statusCode)).toBe("validation");
      expect(r.body).toContain(field);
    }
    expect((await sdk.post("/v1/projects", { name: "Long enough", slug: "long-enough", description: "x".repeat(2000), environment: "e".repeat(64) })).statusCode).toBe(201);
  });

  it("changes only the fields a PATCH sends, clears description or environment with null, and keeps PUT working", async () => {
    const p = await created({ name: "Renal", slug: "renal-sdk", description: "kidneys", environment: "staging" });
    const renamed = await sdk.patch(`/v1/projects/${p.id}`, { name: "Nephrology" });
    expect(renamed.statusCode).toBe(200);
    expectSdkParses(renamed.json(), Project);
    expect(renamed.json()).toMatchObject({ id: p.id, name: "Nephrology", slug: "renal-sdk", description: "kidneys", environment: "staging" });
    const retagged = (await sdk.patch("/v1/projects/renal-sdk", { description: "Renal cohort", environment: "prod" })).json();
    expect(retagged).toMatchObject({ name: "Nephrology", description: "Renal cohort", environment: "prod" });
    expect((await sdk.patch("/v1/projects/renal-sdk", { environment: null })).json()).toMatchObject({ description: "Renal cohort", environment: null });
    const put = await sdk.put("/v1/projects/renal-sdk", { name: "Renal again", description: "via PUT" });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ name: "Renal again", slug: "renal-sdk", description: "via PUT", environment: null });
    expect((await sdk.patch("/v1/projects/renal-sdk", { colour: "red" })).statusCode).toBe(422);
    expect((await sdk.patch("/v1/projects/no-such-project", { name: "x" })).statusCode).toBe(404);
  });

  it("duplicates a project's settings into a new active, non-default project, with none of its data", async () => {
    const src = await created({ name: "Dev Src", slug: "dev-src", description: "validated config", environment: "dev" });
    const key = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "src key", scopes: ["api:manage-patients"], project: "dev-src" } })).json();
    const inSrc = sdkClient(t.app, t.adminKey, "dev-src");
    expect((await inSrc.post("/v1/patients", { first_name: "Ada", sex: "unknown", timezone: "UTC", external_identifiers: [] })).statusCode).toBe(201);
    await sdk.post("/v1/projects/dev-src/deprecate");

    const r = await sdk.post("/v1/projects/dev-src/duplicate", { name: "Prod", slug: "prod-copy", environment: "prod" });
    expect(r.statusCode).toBe(201);
    expectSdkParses(r.json(), Project);
    const dup = r.json();
    expect(dup).toMatchObject({ name: "Prod", slug: "prod-copy", description: "validated config", environment: "prod", status: "active", is_default: false, deprecated_at: null });
    expect(dup.id).not.toBe(src.id);
    const patients = await sdkClient(t.app, t.adminKey, "prod-copy").get("/v1/patients");
    expect(patients.json()).toMatchObject({ patients: [], total: 0 });
    const keys = (await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: t.auth })).json().api_keys as { id: string; project_id: string | null }[];
    expect(keys.filter((k) => k.project_id === dup.id)).toEqual([]);
    expect(keys.find((k) => k.id === key.id)?.project_id).toBe(src.id);

    // Without a slug it comes from the new name; the default project can be a source too.
    const fromDefault = (await sdk.post("/v1/projects/default/duplicate", { name: "Default Copy" })).json();
    expect(fromDefault).toMatchObject({ slug: "default-copy", is_default: false, status: "active" });
    const taken = await sdk.post("/v1/projects/default/duplicate", { name: "Again", slug: "prod-copy" });
    expect(taken.statusCode).toBe(409);
    expect((await sdk.post("/v1/projects/no-such-project/duplicate", { name: "X" })).statusCode).toBe(404);
  });

  it("deprecates and restores on a POST with no body and no Content-Type", async () => {
    const p = await created({ name: "Bodiless", slug: "bodiless" });
    const dep = await sdk.post("/v1/projects/bodiless/deprecate");
    expect(dep.statusCode).toBe(200);
    expectSdkParses(dep.json(), Project);
    expect(dep.json()).toMatchObject({ id: p.id, status: "deprecated", deprecated_at: expect.stringMatching(/Z$/) });
    const res = await sdk.post(`/v1/projects/${p.id}/restore`);
    expect(res.statusCode).toBe(200);
    expectSdkParses(res.json(), Project);
    expect(res.json()).toMatchObject({ status: "active", deprecated_at: null });
  });
});

describe("DELETE /v1/projects/{p} refusals", () => {
  it("answers 409 conflict_error for an active project, saying to deprecate it first, and keeps it", async () => {
    const p = await created({ name: "Still Active", slug: "still-active" });
    const r = await sdk.delete("/v1/projects/still-active");
    expect(r.statusCode).toBe(409);
    expect(sdkOutcome(r.statusCode)).toBe("conflict");
    expect(r.json()).toMatchObject({ error: true, error_type: "conflict_error", details: [{ type: "project_not_deprecated" }] });
    expect(r.json().message).toContain("deprecate it first");
    expect((await sdk.get(`/v1/projects/${p.id}`)).json()).toMatchObject({ status: "active" });
  });

  it("answers 409 for the default project and 404 for a project the organization does not have", async () => {
    const r = await sdk.delete("/v1/projects/default");
    expect(r.statusCode).toBe(409);
    expect(r.json().details[0].type).toBe("default_project");
    expect((await sdk.delete("/v1/projects/no-such-project")).statusCode).toBe(404);
    const org = (await t.app.inject({ method: "POST", url: "/v1/organizations", headers: t.auth, payload: { name: "Elsewhere" } })).json();
    const theirs = (await sdkClient(t.app, org.api_key).post("/v1/projects", { name: "Theirs" })).json();
    await sdkClient(t.app, org.api_key).post(`/v1/projects/${theirs.id}/deprecate`);
    expect((await sdk.delete(`/v1/projects/${theirs.id}`)).statusCode).toBe(404);
  });

  it("refuses project routes to a project-scoped key (403), even for its own project", async () => {
    await created({ name: "Locked", slug: "locked" });
    const k = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "locked", scopes: SCOPES, project: "locked" } })).json();
    const locked = sdkClient(t.app, k.key);
    for (const r of [await locked.get("/v1/projects"), await locked.delete("/v1/projects/locked"), await locked.post("/v1/projects/locked/duplicate", { name: "x" })]) {
      expect(r.statusCode).toBe(403);
      expect(sdkOutcome(r.statusCode)).toBe("auth");
    }
  });
});

describe("a credential bound to one project naming another in X-Project", () => {
  let bound: { key: string; id: string };
  let own: { id: string; slug: string };
  let other: { id: string; slug: string };
  let pid: string;

  beforeAll(async () => {
    own = await created({ name: "Bound Home", slug: "bound-home" });
    other = await created({ name: "Bound Other", slug: "bound-other" });
    bound = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "bound", scopes: SCOPES, project: "bound-home" } })).json();
    pid = (await sdkClient(t.app, bound.key).post("/v1/patients", { first_name: "Bea", sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id;
  });

  /** Every route that takes a credential, with its parameters filled in (REST and MCP alike). */
  const credentialed = () => t.app.routeRules.filter((r) => r.scope !== false && r.method !== "HEAD");
  const pathOf = (url: string) => url.replace(":pid", pid).replace(/:[a-z_]+/g, "x");
  const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

  async function callAll(token: string, header: Record<string, string>) {
    const out: { where: string; status: number; body: { details?: { type: string }[]; message?: string } }[] = [];
    for (const rule of credentialed()) {
      const r = await t.app.inject({
        method: rule.method as "GET",
        url: pathOf(rule.url),
        headers: { authorization: `Bearer ${token}`, ...header, ...(rule.url === "/mcp" ? MCP_HEADERS : {}) },
        ...(rule.url === "/mcp" ? { payload: { jsonrpc: "2.0", id: 1, method: "tools/list" } } : {}),
      });
      out.push({ where: `${rule.method} ${rule.url}`, status: r.statusCode, body: r.json() });
    }
    return out;
  }

  it("refuses every route, REST and MCP, with 403 naming the bound project, for the key, its JWT and its patient tokens", async () => {
    const jwt = (await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: bound.key } })).json().access_token;
    const patientToken = (await sdkClient(t.app, bound.key).post("/v1/auth/token", { patient_id: pid })).json().access_token;
    const cases: [string, Record<string, string>][] = [
      [bound.key, { "x-olira-project": other.slug }],
      [bound.key, { "x-project": other.id }],
      [bound.key, { "x-olira-project": "no-such-project" }],
      [bound.key, { "x-project": own.slug, "x-olira-project": other.slug }],
      [jwt, { "x-olira-project": other.slug }],
      [patientToken, { "x-project": "default" }],
    ];
    for (const [token, header] of cases) {
      for (const { where, status, body } of await callAll(token, header)) {
        expect(status, `${where} ${JSON.stringify(header)}`).toBe(403);
        expect(body.details?.[0]?.type, where).toBe("project_mismatch");
        expect(body.message, where).toContain("bound to project bound-home");
      }
    }
  });

  it("serves the bound project when the header names it by id or slug, as when there is none", async () => {
    for (const header of [{ "x-olira-project": "bound-home" }, { "x-project": own.id }, {}] as Record<string, string>[]) {
      const r = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { authorization: `Bearer ${bound.key}`, ...header } });
      expect(r.statusCode).toBe(200);
      expect(r.json().patients.map((p: { id: string }) => p.id)).toEqual([pid]);
      for (const { where, body } of await callAll(bound.key, header)) expect(body.details?.[0]?.type, where).not.toBe("project_mismatch");
    }
  });

  it("is an AuthError to the SDK, whose client sends the configured project on every request", async () => {
    const r = await sdkClient(t.app, bound.key, other.slug).post("/v1/logs/batch", { logs: [] });
    expect(r.statusCode).toBe(403);
    expect(sdkOutcome(r.statusCode)).toBe("auth");
  });
});
