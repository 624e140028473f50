import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { readSubject } from "../../infra/nats/log-history.js";
import { LogWriter, type PatientLogMessage } from "../../src/logs/log-writer.js";
import { KeyClaims } from "../../src/logs/key-claims.js";
import type { JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import { deleteKeys } from "../../infra/redis/connection.js";

let t: TestStack;
let patient: string;
beforeAll(async () => {
  t = await startStack({ PSS_PUBLISH_TIMEOUT_MS: "200", PSS_MAX_BODY_BYTES: "65536", PSS_MAX_BATCH_BODY_BYTES: "65536" });
  patient = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "Logs" } })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const batch = (payload: unknown, headers: Record<string, string> = t.auth) =>
  t.app.inject({ method: "POST", url: "/v1/logs/batch", headers, payload: payload as object });

const symptom = (score: number, extra: Record<string, unknown> = {}) => ({
  log_type: "symptom_report",
  patient_id: patient,
  timestamp: "2026-03-01T10:00:00Z",
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] },
  ...extra,
});

async function storedLogs(pid = patient): Promise<LogRecord[]> {
  const { js, jsm, names } = t.services.topology;
  const out: LogRecord[] = [];
  for await (const m of readSubject<PatientLogMessage>(js, jsm, names.logsStream, names.logSubject("org_default", "prj_default", pid))) out.push(...m.data.logs);
  return out;
}

describe("POST /v1/logs/batch", () => {
  it("stores valid logs in JetStream on the patient's subject and answers with their ids", async () => {
    const r = await batch({ logs: [symptom(4), { log_type: "user_login", patient_id: patient, timestamp: "2026-03-01T11:00:00+02:00", payload: {}, trace: "visit-1" }] });
    expect(r.statusCode).toBe(200);
    const a = r.json();
    expect(a).toMatchObject({ accepted: 2, failed: 0, duplicates: 0, errors: [] });
    expect(a.results.map((x: any) => x.status)).toEqual(["accepted", "accepted"]);
    const stored = await storedLogs();
    const ids = stored.map((l) => l.id);
    expect(ids).toEqual(expect.arrayContaining(a.results.map((x: any) => x.id)));
    const login = stored.find((l) => l.log_type === "user_login")!;
    expect(login).toMatchObject({ timestamp: "2026-03-01T09:00:00.000Z", trace: "visit-1", organization_id: "org_default", project_id: "prj_default" });
  });

  it("stores the valid logs and reports each invalid one with a located detail", async () => {
    const before = (await storedLogs()).length;
    const r = await batch({ logs: [symptom(3), symptom(11), { log_type: "nope", patient_id: patient, timestamp: "2026-03-01T10:00:00Z", payload: {} }] });
    const a = r.json();
    expect(a).toMatchObject({ accepted: 1, failed: 2 });
    expect(a.errors[0]).toMatchObject({ index: 1, code: "validation_error" });
    expect(a.errors[0].details[0]).toMatchObject({
      location: ["body", "logs", 1, "payload", "symptoms", 0, "score"],
      field: "logs.1.payload.symptoms.0.score",
      input_value: 11,
    });
    expect(a.errors[1]).toMatchObject({ index: 2, code: "unknown_log_type" });
    expect(a.results.map((x: any) => x.status)).toEqual(["accepted", "failed", "failed"]);
    expect((await storedLogs()).length).toBe(before + 1);
  });

  it("writes nothing and answers 422 with every problem in atomic mode", async () => {
    const before = (await storedLogs()).length;
    const r = await batch({ atomic: true, logs: [symptom(3), symptom(-1), { ...symptom(2), timestamp: "yesterday" }] });
    expect(r.statusCode).toBe(422);
    const body = r.json();
    expect(body.error_type).toBe("validation_error");
    expect(body.details.map((d: any) => d.location.slice(0, 3))).toEqual([
      ["body", "logs", 1],
      ["body", "logs", 2],
    ]);
    expect((await storedLogs()).length).toBe(before);
  });

  it("refuses a body field it does not know (a misspelt atomic) with 422 naming it, writing nothing", async () => {
    const before = (await storedLogs()).length;
    const r = await batch({ atomc: true, logs: [symptom(3), symptom(-1)] });
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0]).toMatchObject({ location: ["body", "atomc"], message: "is not an allowed field" });
    expect((await storedLogs()).length).toBe(before);
  });

  it("fails a log for an unknown patient with code patient_not_found", async () => {
    const r = await batch({ logs: [{ ...symptom(1), patient_id: "pat_00000000000000000000000000" }] });
    expect(r.json().errors[0]).toMatchObject({ index: 0, code: "patient_not_found" });
  });

  it("treats a repeated idempotency key as a duplicate of the first log, in the same batch and later", async () => {
    const first = (await batch({ logs: [symptom(5, { idempotency_key: "k-1" }), symptom(5, { idempotency_key: "k-1" })] })).json();
    expect(first.results.map((x: any) => x.status)).toEqual(["accepted", "duplicate"]);
    expect(first.results[1].id).toBe(first.results[0].id);
    const again = (await batch({ logs: [symptom(6, { idempotency_key: "k-1" })] })).json();
    expect(again).toMatchObject({ accepted: 0, duplicates: 1 });
    expect(again.results[0]).toEqual({ index: 0, id: first.results[0].id, status: "duplicate" });
    expect((await storedLogs()).filter((l) => l.idempotency_key === "k-1")).toHaveLength(1);
  });

  it("answers a key repeated within a batch with what its first log came to, also when that was a duplicate", async () => {
    const stored = (await batch({ logs: [symptom(4, { idempotency_key: "k-twice" })] })).json().results[0].id;
    const again = (await batch({ logs: [symptom(4, { idempotency_key: "k-twice" }), symptom(4, { idempotency_key: "k-twice" })] })).json();
    expect(again).toMatchObject({ accepted: 0, duplicates: 2, failed: 0 });
    expect(again.results).toEqual([
      { index: 0, id: stored, status: "duplicate" },
      { index: 1, id: stored, status: "duplicate" },
    ]);
  });

  it("stores the first valid log of a repeated key: an invalid one before it claims nothing", async () => {
    const r = (await batch({ logs: [symptom(-1, { idempotency_key: "k-invalid-first" }), symptom(4, { idempotency_key: "k-invalid-first" }), symptom(5, { idempotency_key: "k-invalid-first" })] })).json();
    expect(r).toMatchObject({ accepted: 1, duplicates: 1, failed: 1 });
    expect(r.results.map((x: any) => x.status)).toEqual(["failed", "accepted", "duplicate"]);
    expect(r.results[2].id).toBe(r.results[1].id);
  });

  it("fails a repeated key's twin with its first log when that one could not be stored, and frees the key", async () => {
    const s = t.services;
    const down = { publish: async () => { throw new Error("stream unavailable"); } } as unknown as JetStreamPublisher;
    const writer = new LogWriter({
      publisher: down, names: s.topology.names, js: s.topology.js, jsm: s.topology.jsm, patients: s.patients, ledger: s.ledger, logIds: s.logIds,
      maxMessageBytes: 1024 * 1024, claimLeaseMs: 5_000,
    });
    const logs = [symptom(3, { idempotency_key: "k-down" }), symptom(3, { idempotency_key: "k-down" })];
    const ans = await writer.writeBatch({ organization_id: "org_default", project_id: "prj_default" }, logs, { source: "batch", atomic: false, at: ["logs"] });
    expect(ans).toMatchObject({ accepted: 0, duplicates: 0, failed: 2 });
    expect(ans.results).toEqual([{ index: 0, id: null, status: "failed" }, { index: 1, id: null, status: "failed" }]);
    expect(ans.errors.map((e) => [e.index, e.code])).toEqual([[0, "storage_error"], [1, "storage_error"]]);
    expect((await batch({ logs: [logs[0]] })).json().results[0].status).toBe("accepted");
  });

  it("still detects duplicates after the Redis cache is lost, rebuilding the index from JetStream", async () => {
    const first = (await batch({ logs: [symptom(2, { idempotency_key: "k-flush" })] })).json();
    await deleteKeys(t.services.redis, `${t.config.namespace}:*`);
    const again = (await batch({ logs: [symptom(2, { idempotency_key: "k-flush" })] })).json();
    expect(again.results[0]).toEqual({ index: 0, id: first.results[0].id, status: "duplicate" });
  });

  it("reads ledger messages of the first format (JSON) when catching up and when rebuilding the index", async () => {
    const stored = (await batch({ logs: [symptom(3)] })).json().results[0].id;
    const { ledger, publisher, topology, redis } = t.services;
    const key = ledger.keyOf("k-legacy");
    // What a build before the text format wrote: claims (and releases) as JSON.
    const subject = topology.names.idempotencySubject("prj_default", key.charCodeAt(0) % 8);
    await publisher.publish(subject, new TextEncoder().encode(JSON.stringify({ c: [{ k: key, l: stored, p: patient, t: Date.now() - 60_000 }] })));
    const caughtUp = (await batch({ logs: [symptom(3, { idempotency_key: "k-legacy" })] })).json();
    expect(caughtUp.results[0]).toEqual({ index: 0, id: stored, status: "duplicate" });
    await deleteKeys(redis, `${t.config.namespace}:*`);
    const rebuilt = (await batch({ logs: [symptom(3, { idempotency_key: "k-legacy" })] })).json();
    expect(rebuilt.results[0]).toEqual({ index: 0, id: stored, status: "duplicate" });
  });

  it("takes over a claim a crash left behind, so the retried log is stored", async () => {
    // What a crash between claiming a key and storing its log leaves behind.
    const { ledger } = t.services;
    const won = await ledger.claim("prj_default", ledger.keyOf("k-orphan"), { log_id: "log_lost", patient_id: patient, claimed_at: Date.now() - 60_000 });
    expect(won).toEqual({ won: true });
    const r = (await batch({ logs: [symptom(7, { idempotency_key: "k-orphan" })] })).json();
    expect(r.results[0].status).toBe("accepted");
    expect((await storedLogs()).some((l) => l.id === r.results[0].id)).toBe(true);
  });

  it("reads a patient's history once for all the keys a crashed attempt of the batch left claimed", async () => {
    const { ledger } = t.services;
    const keys = Array.from({ length: 200 }, (_, i) => `k-crashed-${i}`);
    const claimedAt = Date.now() - 60_000;
    await ledger.claimMany("prj_default", keys.map((k, i) => ({ key: ledger.keyOf(k), claim: { log_id: `log_lost_${i}`, patient_id: patient, claimed_at: claimedAt } })));
    const reads = vi.spyOn(KeyClaims.prototype as unknown as { historyIds: () => unknown }, "historyIds");
    const r = (await batch({ logs: keys.map((k) => symptom(2, { idempotency_key: k })) })).json();
    expect(r).toMatchObject({ accepted: 200, duplicates: 0, failed: 0 });
    expect(reads).toHaveBeenCalledTimes(1);
    reads.mockRestore();
  });

  it("gives one acceptance when two requests race with the same key", async () => {
    const rs = await Promise.all([1, 2, 3].map(() => batch({ logs: [symptom(1, { idempotency_key: "k-race" })] })));
    const statuses = rs.map((r) => r.json().results[0].status).sort();
    expect(statuses).toEqual(["accepted", "duplicate", "duplicate"]);
  });

  it("maps legacy aliases to their canonical type", async () => {
    const r = (await batch({ logs: [{ ...symptom(2), log_type: "symptom_reported" }] })).json();
    expect(r.accepted).toBe(1);
    const stored = (await storedLogs()).find((l) => l.id === r.results[0].id)!;
    expect(stored.log_type).toBe("symptom_report");
  });

  it("answers an empty JSON body with the error body, as a body without logs", async () => {
    const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: { ...t.auth, "content-type": "application/json" } });
    expect(r.statusCode).toBe(422);
    expect(r.json()).toMatchObject({ error: true, status_code: 422, message: expect.any(String) });
  });

  it("answers 422 for a body without a logs array", async () => {
    const r = await batch({ entries: [] });
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0]).toMatchObject({ location: ["body", "logs"] });
  });

  it("answers 400 with the error body for malformed JSON, saying where (line and column) it stops being JSON", async () => {
    const send = (payload: string) => t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: { ...t.auth, "content-type": "application/json" }, payload });
    const cut = await send('{"logs": [');
    expect(cut.statusCode).toBe(400);
    expect(cut.json()).toMatchObject({ error: true, status_code: 400, error_type: "bad_request_error" });
    expect(cut.json().message).toMatch(/^malformed JSON body: .* \(line 1, column 11, where the body ends: is it cut short\?\)$/);
    const colon = await send('{"logs": [\n  {"log_type": "user_login"},\n  {"log_type" "user_login"}\n]}');
    expect(colon.json().message).toMatch(/^malformed JSON body: .*\(line 3, column 15\)$/);
    expect(colon.json().details).toEqual([{ type: "bad_request", message: colon.json().message }]);
  });

  it("answers 413 payload_too_large over the configured batch body size (PSS_MAX_BATCH_BODY_BYTES)", async () => {
    const logs = Array.from({ length: 400 }, () => symptom(1, { metadata: { pad: "x".repeat(200) } }));
    const r = await batch({ logs });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toMatchObject({ error: true, status_code: 413, error_type: "payload_too_large" });
  });

  it("answers 404 with the error body for an unknown route", async () => {
    const r = await t.app.inject({ method: "GET", url: "/v1/nothing-here", headers: t.auth });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toMatchObject({ error: true, error_type: "not_found_error" });
  });
});
