import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NetworkError, PatientStateClient, RateLimitError, ServerError } from "../../client/index.js";
import { startListening } from "../support/console.js";
import { lossyProxy, specAnswer, type LossyProxy, type Step } from "../support/lossy-proxy.js";
import type { TestStack } from "../support/stack.js";

// How the client meets failing answers: retries with backoff, Retry-After, typed errors once
// the retries are spent, refused connections and timeouts. Which writes may be sent again is
// in client-retries.test.ts.
let t: TestStack;
let base: string;
let pss: PatientStateClient;

beforeAll(async () => {
  ({ t, base } = await startListening());
  pss = new PatientStateClient({ baseUrl: base, apiKey: t.adminKey });
});
afterAll(async () => {
  await t?.close();
});

/** A stand-in in front of the service: `script` answers the first requests, the rest go through to the service. */
function scripted(script: Step[]): Promise<LossyProxy> {
  let hits = 0;
  return lossyProxy(base, () => script[hits++] ?? "pass");
}

describe("client: retries and network failures", () => {
  it("retries 5xx with backoff and succeeds when the service recovers", async () => {
    const created = await pss.patients.create({ first_name: "Before" });
    const front = await scripted([specAnswer(503), specAnswer(503)]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retryBaseMs: 20 });
    const p = await c.patients.update(created.id, { first_name: "Retry" });
    expect(front.count()).toBe(3);
    expect((await pss.patients.get(p.id)).first_name).toBe("Retry");
    await front.close();
  });

  it("keeps a logger's batch queued through failed sends and delivers it once", async () => {
    const p = (await pss.patients.create()).id;
    const front = await scripted([specAnswer(503), specAnswer(502)]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 0 });
    const logger = c.logs.logger({ flushIntervalMs: 60_000 });
    await logger.log({ log_type: "user_login", patient_id: p, timestamp: "2026-07-01T10:00:00Z", payload: {} });
    await logger.flush();
    await logger.flush();
    expect(logger.stats).toMatchObject({ queued: 1, sent: 0 });
    await logger.close();
    expect(logger.stats).toMatchObject({ queued: 0, sent: 1, accepted: 1 });
    expect(await pss.logs(p).count()).toBe(1);
    await front.close();
  });

  it("waits between a closing logger's tries of a failing batch instead of sending them back to back", async () => {
    const p = (await pss.patients.create()).id;
    const front = await scripted([specAnswer(503), specAnswer(503)]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 0 });
    const logger = c.logs.logger({ flushIntervalMs: 60_000 });
    await logger.log({ log_type: "user_login", patient_id: p, timestamp: "2026-07-02T10:00:00Z", payload: {} });
    const started = Date.now();
    await logger.close();
    // Tries after 0, 250 and 500 ms: the third goes through.
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    expect(front.count()).toBe(3);
    expect(logger.stats).toMatchObject({ queued: 0, sent: 1, accepted: 1 });
    await front.close();
  });

  it("honours Retry-After on 429", async () => {
    const detail = [{ type: "rate_limit", message: "slow down", retry_after: 1 }];
    const front = await scripted([specAnswer(429, { "retry-after": "1" }, detail)]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retryBaseMs: 1 });
    const started = Date.now();
    expect((await c.projects.list()).map((p) => p.slug)).toContain("default");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(front.count()).toBe(2);
    await front.close();
  });

  it("gives up with typed errors once the retries are spent", async () => {
    const detail = [{ type: "rate_limit", message: "slow down", retry_after: 0 }];
    const front = await scripted([specAnswer(500, {}, [], "internal_server_error"), specAnswer(500, {}, [], "internal_server_error"), specAnswer(429, {}, detail), specAnswer(429, {}, detail)]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 1, retryBaseMs: 1 });
    const e5 = await c.projects.list().catch((e: unknown) => e);
    expect(e5).toBeInstanceOf(ServerError);
    expect(e5).toMatchObject({ status_code: 500, error_type: "internal_server_error" });
    const e429 = await c.projects.list().catch((e: unknown) => e);
    expect(e429).toBeInstanceOf(RateLimitError);
    expect((e429 as RateLimitError).retryAfter).toBe(0);
    expect(front.count()).toBe(4);
    await front.close();
  });

  it("surfaces a closed port as a NetworkError after retrying", async () => {
    const closed = await scripted([]);
    await closed.close();
    const c = new PatientStateClient({ baseUrl: closed.url, apiKey: "k", retries: 2, retryBaseMs: 5 });
    const err = await c.patients.get("pat_x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).message).toMatch(/ECONNREFUSED/);
    expect(err).toMatchObject({ status_code: 0, error_type: "network_error" });
  });

  it("treats an attempt over timeoutMs as a network failure", async () => {
    const front = await scripted([() => undefined]);
    const c = new PatientStateClient({ baseUrl: front.url, apiKey: t.adminKey, retries: 0, timeoutMs: 100 });
    await expect(c.admin.health()).rejects.toThrow(/no answer within 100 ms/);
    await front.close().catch(() => undefined);
  });
});
