import { request } from "node:http";
import type { AddressInfo } from "node:net";
import type { FastifyInstance, InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSecret } from "../../src/control/api-keys.js";
import { sealingKey, unseal, type KeptSecret } from "../../src/auth/jwt-secret.js";
import { buildApp } from "../../app/http/app.js";
import { eventually, startStack, type TestStack } from "../support/stack.js";

/**
 * The service's own pino logger at level trace, writing to memory, while requests use
 * every kind of credential; then the whole log is searched for every secret.
 */
let t: TestStack;
let app: FastifyInstance;
const lines: string[] = [];
const secrets: Record<string, string> = {};
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await startStack();
  app = await buildApp(t.services, { logger: { level: "trace", stream: { write: (line: string) => void lines.push(line) } } });
  await app.ready();
  secrets.admin = t.adminKey;
  secrets.jwtSigning = unseal((await t.services.topology.kv.config.get("jwt_secret"))!.json<KeptSecret>(), sealingKey(t.adminKey, t.config.namespace))!;
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

describe("logs", () => {
  it("never contain an API key, a JWT, a patient token or the JWT signing secret", async () => {
    const inject = (o: InjectOptions) => app.inject(o);
    const pid = (await inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "Lou" } })).json().id;

    const created = (await inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "logged?", scopes: ["sdk:state-read", "mcp:patient-state", "sdk:patient-token", "api:manage-patients"] } })).json();
    secrets.created = created.key;
    secrets.jwt = (await inject({ method: "POST", url: "/auth/token", payload: { api_key: created.key } })).json().access_token;
    secrets.adminJwt = (await inject({ method: "POST", url: "/auth/token", payload: { api_key: t.adminKey } })).json().access_token;
    secrets.patientToken = (await inject({ method: "POST", url: "/v1/auth/token", headers: bearer(secrets.jwt!), payload: { patient_id: pid } })).json().access_token;
    secrets.unknown = generateSecret();
    const revoked = (await inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "gone", scopes: ["sdk:state-read"] } })).json();
    secrets.revoked = revoked.key;
    await inject({ method: "DELETE", url: `/v1/api-keys/${revoked.id}`, headers: t.auth });

    const statuses: number[] = [];
    for (const token of [secrets.admin, secrets.created, secrets.jwt, secrets.adminJwt, secrets.patientToken, secrets.unknown, secrets.revoked]) {
      for (const o of [
        { method: "GET", url: `/v1/state/${pid}/stable`, headers: bearer(token!) },
        { method: "GET", url: "/v1/patients", headers: { authorization: `bearer   ${token}` } },
        { method: "GET", url: "/v1/state/pat_unknown/stable", headers: { ...bearer(token!), "x-project": "default" } },
        { method: "POST", url: "/v1/patients", headers: bearer(token!), payload: { first_name: 42 } },
        { method: "POST", url: "/mcp", headers: { ...bearer(token!), ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_stable_data", arguments: { patient_id: pid } } } },
        // Mistakes clients make: a credential in the query string or the body.
        { method: "GET", url: `/v1/patients?api_key=${encodeURIComponent(token!)}`, headers: t.auth },
        { method: "POST", url: "/auth/token", payload: { api_key: token, extra: token } },
        { method: "POST", url: "/auth/token", payload: `{"api_key":"${token}"`, headers: { "content-type": "application/json" } },
      ]) {
        statuses.push((await inject(o)).statusCode);
      }
    }
    // Every kind of answer went through: success, 400, 401, 403, 404, 422.
    for (const s of [200, 400, 401, 403, 404, 422]) expect(statuses, `status ${s}`).toContain(s);

    // Should anything log request headers or these fields later, they are redacted.
    app.log.info({ req: { headers: { authorization: `Bearer ${secrets.created}` } }, api_key: secrets.created, key: secrets.created, access_token: secrets.jwt }, "an object with credentials");
    app.log.info({ body: { api_key: secrets.created, key: secrets.created }, headers: { authorization: `Bearer ${secrets.jwt}` } }, "nested credentials");

    const log = lines.join("");
    expect(lines.length).toBeGreaterThan(100);
    expect(log).toContain("incoming request");
    expect(log).toContain("[redacted]");
    for (const [name, secret] of Object.entries(secrets)) {
      expect(secret.length, name).toBeGreaterThan(15);
      expect(log.includes(secret), `${name} appears in the log`).toBe(false);
      if (secret.split(".").length === 3) expect(log.includes(secret.split(".")[2]!), `${name} signature appears in the log`).toBe(false);
    }
  });

  it("never contain a one-time upload token, even of an upload dropped midway that leaves it valid", async () => {
    const before = lines.length;
    const u = (await app.inject({ method: "POST", url: "/v1/ingestion/upload-url", headers: t.auth })).json();
    const token = new URL(u.upload_url as string).pathname.split("/").pop()!;
    expect(token.length).toBeGreaterThan(15);
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as AddressInfo;
    // Promise a megabyte, send a line, and hang up.
    await new Promise<void>((resolve) => {
      const req = request({ host: "127.0.0.1", port, method: "PUT", path: `/v1/ingestion/uploads/${token}`, headers: { "content-length": String(1024 * 1024) } });
      req.on("error", () => resolve());
      req.write('{"type":"patient","data":{}}\n', () => setTimeout(() => { req.destroy(); resolve(); }, 200));
    });
    // The service saw the request, and the token is still good: the drop did not spend it.
    const end = Date.now() + 5_000;
    while (!lines.slice(before).some((l) => l.includes("/v1/ingestion/uploads/")) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    // The dropped upload gives its token back once it has cleaned up; until then it is 409.
    const again = await eventually(
      () => app.inject({ method: "PUT", url: `/v1/ingestion/uploads/${token}`, payload: '{"type":"patient","data":{}}\n' }),
      (r) => r.statusCode !== 409,
    );
    expect(again.statusCode, again.body).toBe(200);
    const log = lines.slice(before).join("");
    expect(log).toContain("/v1/ingestion/uploads/[redacted]");
    expect(log.includes(token), "the upload token appears in the log").toBe(false);
  });
});

