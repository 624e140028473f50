import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { generateSecret } from "../../src/control/api-keys.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

function expectErrorBody(body: any, status: number, type: string) {
  expect(body).toMatchObject({ error: true, status_code: status, error_type: type });
  expect(typeof body.message).toBe("string");
  expect(Array.isArray(body.details)).toBe(true);
  expect(body.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/);
}

describe("authentication and health", () => {
  it("answers /healthz without credentials with each backend's status", async () => {
    const r = await t.app.inject({ method: "GET", url: "/healthz" });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ status: "ok", nats: { status: "up" }, redis: { status: "up" }, clickhouse: { status: "up" } });
  });

  it("refuses a request without a bearer credential with 401 and the error body", async () => {
    const r = await t.app.inject({ method: "GET", url: "/v1/patients" });
    expect(r.statusCode).toBe(401);
    expectErrorBody(r.json(), 401, "authentication_error");
  });

  it("refuses an unknown API key and a garbage token with 401", async () => {
    for (const token of [generateSecret(), "not-a-jwt"]) {
      const r = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { authorization: `Bearer ${token}` } });
      expect(r.statusCode).toBe(401);
      expectErrorBody(r.json(), 401, "authentication_error");
    }
  });

  it("exchanges an API key for a JWT that works as a bearer credential", async () => {
    const r = await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: t.adminKey } });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ token_type: "bearer", expires_in: 900 });
    const list = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { authorization: `Bearer ${body.access_token}` } });
    expect(list.statusCode).toBe(200);
  });

  it("refuses a field /auth/token does not take with 422 naming it, and says where lifetime, scopes and project are taken", async () => {
    const token = (payload: object) => t.app.inject({ method: "POST", url: "/auth/token", payload });
    const bogus = await token({ api_key: t.adminKey, bogus: 1 });
    expect(bogus.statusCode).toBe(422);
    expect(bogus.json()).toMatchObject({ error_type: "validation_error", details: [{ field: "bogus", location: ["body", "bogus"] }] });
    for (const [field, value, where] of [["expires_in", 60, "POST /v1/auth/token"], ["scopes", ["x"], "POST /v1/api-keys"], ["project", "p2", "X-Project"]] as const) {
      const r = await token({ api_key: t.adminKey, [field]: value, bogus: 1 });
      expect(r.statusCode, field).toBe(422);
      expect(r.json(), field).toMatchObject({ error_type: "validation_error", details: [{ field, location: ["body", field], input_value: value }] });
      expect(r.json().message, field).toContain(where);
      expect(r.body, field).not.toContain("access_token");
    }
  });

  it("refuses /auth/token for an unknown key with 401", async () => {
    const r = await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: generateSecret() } });
    expect(r.statusCode).toBe(401);
  });

  it("refuses an expired JWT with 401", async () => {
    const token = await t.services.tokens.sign(
      { organization_id: "org_default", project_id: null, scopes: ["api:manage-patients"], key_id: "key_admin" },
      -60,
      "access",
    );
    const r = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { authorization: `Bearer ${token}` } });
    expect(r.statusCode).toBe(401);
  });

  it("answers 403 when the key lacks the route's scope", async () => {
    const secret = generateSecret();
    await t.services.apiKeys.create({ organization_id: "org_default", project_id: null, name: "reader", scopes: ["sdk:state-read"] }, secret);
    const r = await t.app.inject({ method: "POST", url: "/v1/patients", headers: { authorization: `Bearer ${secret}` }, payload: {} });
    expect(r.statusCode).toBe(403);
    expectErrorBody(r.json(), 403, "authorization_error");
  });

  it("stops accepting a revoked key and the JWTs minted from it", async () => {
    const secret = generateSecret();
    const key = await t.services.apiKeys.create({ organization_id: "org_default", project_id: null, name: "temp", scopes: ["api:manage-patients"] }, secret);
    const tok = (await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: secret } })).json().access_token;
    await t.services.apiKeys.revoke(key.id, new Date().toISOString());
    for (const cred of [secret, tok]) {
      const r = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { authorization: `Bearer ${cred}` } });
      expect(r.statusCode).toBe(401);
    }
  });

  it("creates an organization whose key sees nothing of another organization (404)", async () => {
    const created = await t.app.inject({ method: "POST", url: "/v1/organizations", headers: t.auth, payload: { name: "Clinic B" } });
    expect(created.statusCode).toBe(201);
    const org = created.json();
    expect(org).toMatchObject({ name: "Clinic B", id: expect.stringMatching(/^org_/), default_project_id: expect.stringMatching(/^prj_/) });
    const p = await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "Ada" } });
    const other = { authorization: `Bearer ${org.api_key}` };
    const r = await t.app.inject({ method: "GET", url: `/v1/patients/${p.json().id}`, headers: other });
    expect(r.statusCode).toBe(404);
    expectErrorBody(r.json(), 404, "not_found_error");
    const notAdmin = await t.app.inject({ method: "POST", url: "/v1/organizations", headers: other, payload: { name: "x" } });
    expect(notAdmin.statusCode).toBe(403);
  });

  it("answers a path parameter over 100 characters with the spec's error body (422), as one of 65 to 100", async () => {
    for (const n of [80, 101, 300]) {
      const r = await t.app.inject({ method: "GET", url: `/v1/patients/${"a".repeat(n)}`, headers: t.auth });
      expect(r.statusCode, String(n)).toBe(422);
      expect(r.json()).toMatchObject({ error: true, status_code: 422, error_type: "validation_error" });
    }
  });

  it("answers 404 for an X-Project the organization does not have", async () => {
    const r = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { ...t.auth, "x-project": "nope" } });
    expect(r.statusCode).toBe(404);
    const ok = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { ...t.auth, "x-project": "default" } });
    expect(ok.statusCode).toBe(200);
  });
});
