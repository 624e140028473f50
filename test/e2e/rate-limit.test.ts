import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSecret } from "../../src/control/api-keys.js";
import { loadConfig } from "../../src/config.js";
import { buildApp } from "../../app/http/app.js";
import { startStack, type TestStack } from "../support/stack.js";
import { scanKeys } from "../../infra/redis/connection.js";

const MAX = 3;
const env = { PSS_RATE_LIMIT_MAX: String(MAX), PSS_RATE_LIMIT_WINDOW_MS: "60000" };
let t: TestStack;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  t = await startStack(env);
});
afterAll(async () => {
  await t?.close();
});

async function key(): Promise<string> {
  const r = await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "limited", scopes: ["api:manage-patients", "sdk:patient-token", "sdk:state-read"] } });
  return r.json().key;
}

const list = (headers: Record<string, string>, remoteAddress?: string) =>
  t.app.inject({ method: "GET", url: "/v1/patients", headers, ...(remoteAddress ? { remoteAddress } : {}) });

function expect429(r: Awaited<ReturnType<typeof list>>) {
  expect(r.statusCode).toBe(429);
  const body = r.json();
  expect(body).toMatchObject({ error: true, status_code: 429, error_type: "server_error", message: expect.stringContaining("rate limit") });
  const detail = body.details.find((d: { type: string }) => d.type === "rate_limit");
  expect(detail).toMatchObject({ type: "rate_limit", message: expect.any(String), retry_after: expect.any(Number) });
  expect(detail.retry_after).toBeGreaterThanOrEqual(1);
  expect(detail.retry_after).toBeLessThanOrEqual(60);
  expect(r.headers["retry-after"]).toBe(String(detail.retry_after));
  expect(body.timestamp).toMatch(/Z$/);
}

describe("rate limits", () => {
  it("answers 429 server_error with a rate_limit detail and Retry-After once a key used its window", async () => {
    const k = await key();
    for (let i = 0; i < MAX; i++) {
      const r = await list(bearer(k));
      expect(r.statusCode).toBe(200);
      expect(r.headers["x-ratelimit-remaining"]).toBe(String(MAX - 1 - i));
    }
    expect429(await list(bearer(k)));
    // The counters live in Redis under the namespace, so every instance shares them.
    const keys = await scanKeys(t.services.redis, `${t.config.namespace}:rl:*`);
    expect(keys.some((x) => x.startsWith(`${t.config.namespace}:rl:key:key_`))).toBe(true);
  });

  it("does not limit another key, nor the bootstrap key", async () => {
    const a = await key();
    for (let i = 0; i <= MAX; i++) await list(bearer(a));
    expect((await list(bearer(a))).statusCode).toBe(429);
    const b = await key();
    expect((await list(bearer(b))).statusCode).toBe(200);
    for (let i = 0; i < MAX * 3; i++) expect((await list(t.auth)).statusCode).toBe(200);
  });

  it("does not limit the bootstrap key's JWTs, but limits the patient tokens it mints", async () => {
    const jwt = (await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: t.adminKey } })).json().access_token;
    for (let i = 0; i < MAX * 2; i++) expect((await list(bearer(jwt))).statusCode).toBe(200);
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const token = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: t.auth, payload: { patient_id: pid } })).json().access_token;
    const read = () => t.app.inject({ method: "GET", url: `/v1/state/${pid}/stable`, headers: bearer(token) });
    for (let i = 0; i < MAX; i++) expect((await read()).statusCode).toBe(200);
    expect429(await read());
    // The operator's own requests still go through.
    expect((await list(t.auth)).statusCode).toBe(200);
  });

  it("counts JWTs and patient tokens against the key they were minted from", async () => {
    const k = await key();
    const jwt = (await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: k }, remoteAddress: "10.0.0.1" })).json().access_token;
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const minted = await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: bearer(k), payload: { patient_id: pid } }); // 1
    const token = minted.json().access_token;
    expect((await list(bearer(jwt))).statusCode).toBe(200); // 2
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${pid}/stable`, headers: bearer(token) })).statusCode).toBe(200); // 3
    expect429(await list(bearer(jwt)));
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${pid}/stable`, headers: bearer(token) })).statusCode).toBe(429);
    expect((await list(bearer(k))).statusCode).toBe(429);
  });

  it("limits callers without a credential per IP address (/auth/token), and failed authentications per IP", async () => {
    const ip = "10.0.0.2";
    for (let i = 0; i < MAX; i++) {
      expect((await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: generateSecret() }, remoteAddress: ip })).statusCode).toBe(401);
    }
    const over = await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: generateSecret() }, remoteAddress: ip });
    expect429(over);
    // Another address is not affected.
    expect((await t.app.inject({ method: "POST", url: "/auth/token", payload: { api_key: generateSecret() }, remoteAddress: "10.0.0.3" })).statusCode).toBe(401);

    const guesser = "10.0.0.4";
    for (let i = 0; i < MAX; i++) expect((await list(bearer(generateSecret()), guesser)).statusCode).toBe(401);
    expect429(await list(bearer(generateSecret()), guesser));
  });

  it("never limits /healthz nor /metrics", async () => {
    for (let i = 0; i < MAX * 3; i++) expect((await t.app.inject({ method: "GET", url: "/healthz", remoteAddress: "10.0.0.5" })).statusCode).toBe(200);
    for (let i = 0; i < MAX * 3; i++) expect((await t.app.inject({ method: "GET", url: "/metrics", remoteAddress: "10.0.0.5" })).statusCode).toBe(200);
  });

  it("turns off with PSS_RATE_LIMIT_MAX=0", async () => {
    // One stack per process (embedded ClickHouse): a second app on the same services, configured off.
    const config = { ...t.services.config, ...loadConfig({ ...env, PSS_RATE_LIMIT_MAX: "0" }) };
    expect(config.rateLimitMax).toBe(0);
    const off = await buildApp({ ...t.services, config }, { logger: false });
    try {
      const k = await key();
      for (let i = 0; i < MAX * 3; i++) {
        const r = await off.inject({ method: "GET", url: "/v1/patients", headers: bearer(k) });
        expect(r.statusCode).toBe(200);
        expect(r.headers["x-ratelimit-limit"]).toBeUndefined();
      }
    } finally {
      await off.close();
    }
  });
});
