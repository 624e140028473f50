import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scope } from "../../src/auth/scopes.js";
import { generateSecret } from "../../src/control/api-keys.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let a: string;
let b: string;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const mint = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  t.app.inject({ method: "POST", url: "/v1/auth/token", headers, payload });
const stable = (token: string, pid: string) => t.app.inject({ method: "GET", url: `/v1/state/${pid}/stable`, headers: bearer(token) });

/** A new org-wide key of the default organization holding `scopes`. */
async function key(scopes: Scope[]): Promise<{ id: string; secret: string }> {
  const secret = generateSecret();
  const k = await t.services.apiKeys.create({ organization_id: "org_default", project_id: null, name: "test", scopes }, secret);
  return { id: k.id, secret };
}

beforeAll(async () => {
  t = await startStack();
  a = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  b = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

describe("POST /v1/auth/token (patient tokens)", () => {
  it("mints a bearer token for a patient, 15 minutes by default, with the patient-token scopes the key holds", async () => {
    const r = await mint(t.auth, { patient_id: a });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ access_token: expect.any(String), token_type: "bearer", expires_in: 900, scopes: ["mcp:patient-state", "sdk:state-read", "sdk:event-log"] });
    const narrow = await key(["sdk:patient-token", "sdk:state-read"]);
    expect((await mint(bearer(narrow.secret), { patient_id: a })).json().scopes).toEqual(["sdk:state-read"]);
  });

  it("reads only its own patient: another patient of the project answers 404", async () => {
    const token = (await mint(t.auth, { patient_id: a })).json().access_token;
    expect((await stable(token, a)).statusCode).toBe(200);
    const other = await stable(token, b);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ error_type: "not_found_error" });
  });

  it("queries only its own patient: a cohort naming another patient answers 404, its own is answered", async () => {
    const token = (await mint(t.auth, { patient_id: a })).json().access_token;
    const query = (patient_ids: string[]) => t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: bearer(token), payload: { count: true, patient_ids } });
    const other = await query([a, b]);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ error_type: "not_found_error", message: `patient ${b} not found` });
    expect((await query(["pat_nobody"])).statusCode).toBe(404);
    const own = await query([a]);
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ count: 0 });
  });

  it("reaches nothing once its patient is deleted, the project-wide log query included", async () => {
    const gone = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const log = { log_type: "user_login", patient_id: gone, timestamp: "2026-03-01T10:00:00Z", payload: {} };
    expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [log] } })).json().accepted).toBe(1);
    const token = (await mint(t.auth, { patient_id: gone })).json().access_token;
    const query = () => t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: bearer(token), payload: {} });
    // Read once the copy has the log (the query waits for it), so the refusal below is the deletion's.
    expect((await query()).json().count).toBe(1);
    expect((await t.app.inject({ method: "DELETE", url: `/v1/patients/${gone}`, headers: t.auth })).statusCode).toBe(200);
    const after = await query();
    expect(after.statusCode).toBe(404);
    expect(after.json()).toMatchObject({ error_type: "not_found_error", message: `patient ${gone} not found` });
    expect((await t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: t.auth, payload: { count: true, patient_ids: [gone] } })).json().count).toBe(1);
  });

  it("refuses a key another patient's log holds (idempotency_conflict, the holder unnamed), whoever sends it; the same patient's is a duplicate", async () => {
    const log = (pid: string) => ({ log_type: "user_login", patient_id: pid, timestamp: "2026-03-01T10:00:00Z", payload: {}, idempotency_key: "shared-key-1" });
    // A patient token claims first a key the clinic will use for another patient.
    const token = (await mint(t.auth, { patient_id: a })).json().access_token;
    const first = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: bearer(token), payload: { logs: [log(a)] } })).json();
    expect(first.results[0].status).toBe("accepted");
    for (const headers of [t.auth, bearer((await mint(t.auth, { patient_id: b })).json().access_token)]) {
      const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers, payload: { logs: [log(b)] } })).json();
      expect(r).toMatchObject({ accepted: 0, duplicates: 0, failed: 1, results: [{ index: 0, id: null, status: "failed" }] });
      expect(r.errors[0]).toMatchObject({ index: 0, code: "idempotency_conflict", details: [expect.objectContaining({ location: ["body", "logs", 0, "idempotency_key"] })] });
      expect(r.errors[0].message).toContain("already held by a log of another patient");
      expect(JSON.stringify(r)).not.toContain(first.results[0].id);
      expect(JSON.stringify(r)).not.toContain(a);
    }
    // The key's own patient: a duplicate, with the id.
    expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [log(a)] } })).json().results[0]).toEqual({ index: 0, id: first.results[0].id, status: "duplicate" });
  });

  it("needs sdk:patient-token, and a patient token cannot mint tokens", async () => {
    const reader = await key(["sdk:state-read"]);
    expect((await mint(bearer(reader.secret), { patient_id: a })).statusCode).toBe(403);
    const token = (await mint(t.auth, { patient_id: a })).json().access_token;
    expect((await mint(bearer(token), { patient_id: a })).statusCode).toBe(403);
  });

  it("answers 404 for a patient that is not in the caller's project", async () => {
    const r = await mint(t.auth, { patient_id: "pat_00000000000000000000000000" });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toMatchObject({ error: true, error_type: "not_found_error" });
  });

  it("validates expires_in: 1 s to 24 h", async () => {
    expect((await mint(t.auth, { patient_id: a, expires_in: 86_400 })).json().expires_in).toBe(86_400);
    expect((await mint(t.auth, { patient_id: a, expires_in: 86_401 })).statusCode).toBe(422);
    expect((await mint(t.auth, { patient_id: a, expires_in: 0 })).statusCode).toBe(422);
    expect((await mint(t.auth, {})).statusCode).toBe(422);
  });

  it("expires: a token minted for 1 s is refused after 2 s", async () => {
    // JWT expiry has whole-second resolution: mint just after a second starts, so the token
    // really lives about 1 s and the first read is inside it.
    await new Promise((r) => setTimeout(r, 1_000 - (Date.now() % 1_000) + 20));
    const token = (await mint(t.auth, { patient_id: a, expires_in: 1 })).json().access_token;
    expect((await stable(token, a)).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 2_000));
    const r = await stable(token, a);
    expect(r.statusCode).toBe(401);
    expect(r.json()).toMatchObject({ error_type: "authentication_error" });
  });

  it("stops working when its parent key is revoked", async () => {
    const parent = await key(["sdk:patient-token", "sdk:state-read", "mcp:patient-state"]);
    const token = (await mint(bearer(parent.secret), { patient_id: a })).json().access_token;
    expect((await stable(token, a)).statusCode).toBe(200);
    await t.services.apiKeys.revoke(parent.id, new Date().toISOString());
    expect((await stable(token, a)).statusCode).toBe(401);
    const mcp = await t.app.inject({ method: "POST", url: "/mcp", headers: { ...bearer(token), accept: "application/json, text/event-stream" }, payload: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    expect(mcp.statusCode).toBe(401);
  });

  it("binds the token to the project of the patient: an X-Project naming another is refused (403), naming its own is served", async () => {
    const token = (await mint(t.auth, { patient_id: a })).json().access_token;
    const r = await t.app.inject({ method: "GET", url: `/v1/state/${a}/stable`, headers: { ...bearer(token), "x-project": "some-other-project" } });
    expect(r.statusCode).toBe(403);
    expect(r.json().details[0].type).toBe("project_mismatch");
    const own = await t.app.inject({ method: "GET", url: `/v1/state/${a}/stable`, headers: { ...bearer(token), "x-project": "default" } });
    expect(own.statusCode).toBe(200);
  });
});
