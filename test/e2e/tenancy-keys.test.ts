import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonKv } from "../../infra/nats/json-kv.js";
import type { ApiKey } from "../../src/control/api-keys.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let pid: string;
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "Kim" } })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const create = (payload: Record<string, unknown>, headers = t.auth) => t.app.inject({ method: "POST", url: "/v1/api-keys", headers, payload });

async function eventually(check: () => Promise<boolean>, ms = 3_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every raw value of a KV bucket, as text. */
async function bucketText(kv: import("@nats-io/kv").KV): Promise<string> {
  let out = "";
  for await (const k of await kv.keys()) out += `${k}=${(await kv.get(k))?.string() ?? ""}\n`;
  return out;
}

/** Status of a state read and of an MCP call made with `token`. */
async function access(token: string): Promise<{ rest: number; mcp: number }> {
  const rest = (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/stable`, headers: bearer(token) })).statusCode;
  const mcp = (
    await t.app.inject({ method: "POST", url: "/mcp", headers: { ...bearer(token), ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id: 1, method: "tools/list" } })
  ).statusCode;
  return { rest, mcp };
}

/** A key with read scopes, a JWT and a patient token minted from it. */
async function family(name: string) {
  const k = (await create({ name, scopes: ["sdk:state-read", "mcp:patient-state", "sdk:patient-token"] })).json();
  const jwt = (await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: k.key } })).json().access_token as string;
  const patient = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: bearer(k.key), payload: { patient_id: pid } })).json().access_token as string;
  return { k, credentials: { key: k.key as string, jwt, patient } };
}

describe("API keys", () => {
  it("shows the secret once, lists keys without it, and stores only its hash", async () => {
    const r = await create({ name: "ingest gateway", scopes: ["sdk:event-log"] });
    expect(r.statusCode).toBe(201);
    const k = r.json();
    expect(k).toMatchObject({ id: expect.stringMatching(/^key_/), name: "ingest gateway", scopes: ["sdk:event-log"], project_id: null, key: expect.stringMatching(/^pss_/) });
    expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: bearer(k.key), payload: { logs: [] } })).statusCode).toBe(200);
    const list = await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: t.auth });
    expect(list.statusCode).toBe(200);
    const listed = list.json().api_keys.find((x: ApiKey) => x.id === k.id);
    expect(listed).toEqual({ id: k.id, name: "ingest gateway", scopes: ["sdk:event-log"], project_id: null, created_at: k.created_at, revoked_at: null });
    expect(list.body).not.toContain(k.key);
    expect(list.body).not.toContain(t.adminKey);
    const { kv } = t.services.topology;
    for (const bucket of [kv.apiKeys, kv.apiKeyHashes]) {
      const text = await bucketText(bucket);
      expect(text).toContain(k.id);
      expect(text).not.toContain(k.key);
      expect(text).not.toContain(t.adminKey);
    }
  });

  it("binds a key created with a project (id or slug) to that project: X-Project naming another is refused (403), never served from its own", async () => {
    const other = (await t.app.inject({ method: "POST", url: "/v1/projects", headers: t.auth, payload: { name: "Side", slug: "side" } })).json();
    const k = (await create({ name: "side reader", scopes: ["api:manage-patients"], project: "side" })).json();
    expect(k.project_id).toBe(other.id);
    const mine = await t.app.inject({ method: "POST", url: "/v1/patients", headers: bearer(k.key), payload: { first_name: "Side" } });
    const elsewhere = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { ...bearer(k.key), "x-project": "default" } });
    expect(elsewhere.statusCode).toBe(403);
    expect(elsewhere.json()).toMatchObject({ error_type: "authorization_error", details: [{ type: "project_mismatch" }] });
    const seen = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { ...bearer(k.key), "x-project": "side" } });
    expect(seen.json().patients.map((p: { id: string }) => p.id)).toEqual([mine.json().id]);
    expect((await t.app.inject({ method: "GET", url: `/v1/patients/${pid}`, headers: bearer(k.key) })).statusCode).toBe(404);
    expect((await create({ name: "x", scopes: ["sdk:state-read"], project: other.id })).json().project_id).toBe(other.id);
  });

  it("refuses an org-wide key whose X-Project and X-Olira-Project name two projects (403 project_mismatch), and serves one named twice", async () => {
    const p2 = (await t.app.inject({ method: "POST", url: "/v1/projects", headers: t.auth, payload: { name: "Two", slug: "p2" } })).json();
    const k = (await create({ name: "org reader", scopes: ["api:manage-patients"] })).json();
    for (const headers of [{ "x-project": "p2", "x-olira-project": "default" }, { "x-project": "default", "x-olira-project": "p2" }]) {
      const r = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { ...bearer(k.key), ...headers } });
      expect(r.statusCode, JSON.stringify(headers)).toBe(403);
      expect(r.json()).toMatchObject({ error_type: "authorization_error", details: [{ type: "project_mismatch" }] });
      expect(r.body).not.toContain(pid);
    }
    const same = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { ...bearer(k.key), "x-project": "p2", "x-olira-project": p2.id } });
    expect(same.statusCode).toBe(200);
    expect((await t.app.inject({ method: "GET", url: "/v1/auth/me", headers: { ...bearer(k.key), "x-olira-project": "p2" } })).json().project_id).toBe(p2.id);
  });

  it("grants only scopes its creator holds, never admin:organizations, only known ones, only in the organization's projects", async () => {
    const creator = (await create({ name: "key manager", scopes: ["api:manage-projects", "sdk:state-read"] })).json();
    const by = bearer(creator.key);
    expect((await create({ name: "ok", scopes: ["sdk:state-read"] }, by)).statusCode).toBe(201);
    const wider = await create({ name: "wider", scopes: ["sdk:state-read", "api:manage-patients"] }, by);
    expect(wider.statusCode).toBe(403);
    expect(wider.json()).toMatchObject({ error_type: "authorization_error", details: [{ type: "scope_not_held", location: ["body", "scopes", 1] }] });
    // Not even the bootstrap key, which holds it, can hand it on; nor its JWT.
    const adminJwt = (await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: t.adminKey } })).json().access_token;
    for (const headers of [t.auth, bearer(adminJwt)]) {
      const r = await create({ name: "root", scopes: ["admin:organizations"] }, headers);
      expect(r.statusCode).toBe(403);
      expect(r.json().details[0].type).toBe("scope_not_grantable");
    }
    expect((await create({ name: "typo", scopes: ["sdk:state-reed"] })).statusCode).toBe(422);
    expect((await create({ name: "none", scopes: [] })).statusCode).toBe(422);
    expect((await create({ name: "nowhere", scopes: ["sdk:state-read"], project: "no-such-project" })).statusCode).toBe(404);
    const org = (await t.app.inject({ method: "POST", url: "/v1/organizations", headers: t.auth, payload: { name: "Elsewhere" } })).json();
    expect((await create({ name: "theirs", scopes: ["sdk:state-read"], project: org.default_project_id })).statusCode).toBe(404);
  });

  it("answers 404 for another organization's key and 409 for the bootstrap key", async () => {
    const org = (await t.app.inject({ method: "POST", url: "/v1/organizations", headers: t.auth, payload: { name: "Neighbour" } })).json();
    const theirs = (await create({ name: "theirs", scopes: ["sdk:state-read"] }, bearer(org.api_key))).json();
    expect((await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${theirs.id}`, headers: t.auth })).statusCode).toBe(404);
    expect((await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: bearer(org.api_key) })).json().api_keys.map((k: ApiKey) => k.id)).not.toContain("key_admin");
    expect((await t.app.inject({ method: "DELETE", url: "/v1/api-keys/key_admin", headers: t.auth })).statusCode).toBe(409);
    expect((await access(theirs.key)).rest).toBe(404); // their key works, in their organization only
  });

  it("revokes at once: the key, its JWTs and its patient tokens all get 401 on REST and MCP", async () => {
    const { k, credentials } = await family("short-lived");
    for (const c of Object.values(credentials)) expect(await access(c)).toEqual({ rest: 200, mcp: 200 });
    const del = await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${k.id}`, headers: t.auth });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toMatchObject({ id: k.id, revoked_at: expect.stringMatching(/Z$/) });
    expect(del.body).not.toContain(k.key);
    for (const [name, c] of Object.entries(credentials)) expect(await access(c), name).toEqual({ rest: 401, mcp: 401 });
    expect((await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: k.key } })).statusCode).toBe(401);
    const again = await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${k.id}`, headers: t.auth });
    expect(again.json().revoked_at).toBe(del.json().revoked_at);
    const listed = (await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: t.auth })).json().api_keys.find((x: ApiKey) => x.id === k.id);
    expect(listed.revoked_at).toBe(del.json().revoked_at);
  });

  it("applies a revocation written by another instance at once, through the KV watch", async () => {
    const { k, credentials } = await family("revoked elsewhere");
    for (const c of Object.values(credentials)) expect((await access(c)).rest).toBe(200); // now cached here
    // Straight to the bucket, as another instance would write it.
    await new JsonKv<ApiKey>(t.services.topology.kv.apiKeys).modify(k.id, (x) => ({ ...x, revoked_at: new Date().toISOString() }));
    await eventually(async () => (await access(credentials.key)).rest === 401);
    for (const [name, c] of Object.entries(credentials)) expect(await access(c), name).toEqual({ rest: 401, mcp: 401 });
  });

  it("keeps a revocation even when a read of the old key finishes after the watch saw it", async () => {
    const k = (await create({ name: "race", scopes: ["sdk:state-read"] })).json();
    const stale = await new JsonKv<ApiKey>(t.services.topology.kv.apiKeys).get(k.id);
    const revoked = await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${k.id}`, headers: t.auth });
    expect(revoked.statusCode).toBe(200);
    // A read that started before the revocation lands late, with the older revision.
    t.services.apiKeys.refresh(k.id, stale!.value, stale!.revision);
    expect((await access(k.key)).rest).toBe(401);
  });
});
