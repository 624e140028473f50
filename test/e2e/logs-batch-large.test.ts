import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSubject } from "../../infra/nats/log-history.js";
import type { PatientLogMessage } from "../../src/logs/log-writer.js";
import { startStack, type TestStack } from "../support/stack.js";

/** Logs larger than one JetStream message (the server's max_payload, 1 MB here) in bodies the service takes. */
let t: TestStack;
let patient: string;
beforeAll(async () => {
  t = await startStack({ PSS_MAX_BODY_BYTES: String(4 * 1024 * 1024) });
  patient = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const batch = (payload: object) => t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload });
const symptom = (key: string, pad = "") => ({
  log_type: "symptom_report",
  patient_id: patient,
  timestamp: "2026-03-01T10:00:00Z",
  idempotency_key: key,
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 3 }], ...(pad ? { extensions: { pad } } : {}) },
});

async function storedKeys(): Promise<string[]> {
  const { js, jsm, names } = t.services.topology;
  const out: string[] = [];
  for await (const m of readSubject<PatientLogMessage>(js, jsm, names.logsStream, names.logSubject("org_default", "prj_default", patient))) {
    for (const l of m.data.logs) out.push(l.idempotency_key ?? "");
  }
  return out;
}

describe("POST /v1/logs/batch with a log too large to store", () => {
  const huge = "x".repeat(2_000_000);

  it("fails that log as the client's error, not a retryable storage error, and stores the rest", async () => {
    const r = await batch({ logs: [symptom("large-ok"), symptom("large-huge", huge)] });
    expect(r.statusCode).toBe(200);
    const body = r.json();
    expect(body).toMatchObject({ accepted: 1, failed: 1 });
    expect(body.errors[0]).toMatchObject({ index: 1, code: "validation_error" });
    expect(body.errors[0].details[0]).toMatchObject({ type: "payload_too_large", location: ["body", "logs", 1, "payload"] });
    const alone = await batch({ logs: [symptom("large-alone", huge)] });
    expect(alone.statusCode).toBe(200);
    expect(alone.json()).toMatchObject({ accepted: 0, failed: 1 });
  });

  it("measures a log as it will be stored, not as it was sent (1e20 is 4 bytes sent, 21 stored)", async () => {
    const body = `{"atomic":true,"logs":[${JSON.stringify(symptom("grows-ok"))},${JSON.stringify({ ...symptom("grows-big"), metadata: { x: "@" } }).replace('"@"', `[${Array(150_000).fill("1e20").join(",")}]`)}]}`;
    expect(body.length).toBeLessThan(1_000_000);
    const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: { ...t.auth, "content-type": "application/json" }, payload: body });
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0]).toMatchObject({ type: "payload_too_large", location: ["body", "logs", 1, "payload"] });
    expect(await storedKeys()).not.toContain("grows-ok");
  });

  it("rejects an atomic batch whole with 422, writing nothing and claiming no key", async () => {
    const r = await batch({ atomic: true, logs: [symptom("atomic-good"), symptom("atomic-huge", huge)] });
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0]).toMatchObject({ type: "payload_too_large", location: ["body", "logs", 1, "payload"] });
    expect(await storedKeys()).not.toContain("atomic-good");
    const retry = (await batch({ logs: [symptom("atomic-good")] })).json();
    expect(retry.results[0].status).toBe("accepted");
  });
});
