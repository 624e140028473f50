import { describe, expect, it } from "vitest";
import { validateEnvelope } from "../../src/logs/envelope.js";
import { canonicalTimestamp } from "../../readmodels/lib/time.js";

describe("canonicalTimestamp", () => {
  it("keeps canonical UTC as is and normalises offsets and missing milliseconds to UTC", () => {
    expect(canonicalTimestamp("2026-03-01T10:00:00.000Z")).toBe("2026-03-01T10:00:00.000Z");
    expect(canonicalTimestamp("2026-03-01T10:00:00Z")).toBe("2026-03-01T10:00:00.000Z");
    expect(canonicalTimestamp("2026-03-01T12:00:00+02:00")).toBe("2026-03-01T10:00:00.000Z");
    expect(canonicalTimestamp("2026-03-01T10:00Z")).toBe("2026-03-01T10:00:00.000Z");
  });

  it("rejects dates that do not exist, times without an offset and non-strings", () => {
    for (const bad of ["2026-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-03-01T24:00:00.000Z", "2026-03-01T10:00:00", "yesterday", 1700000000, null]) {
      expect(canonicalTimestamp(bad)).toBeNull();
    }
    expect(canonicalTimestamp("2024-02-29T00:00:00.000Z")).toBe("2024-02-29T00:00:00.000Z");
    expect(canonicalTimestamp("2000-02-29T00:00:00.000Z")).toBe("2000-02-29T00:00:00.000Z");
    expect(canonicalTimestamp("1900-02-29T00:00:00.000Z")).toBeNull();
  });
});

describe("validateEnvelope", () => {
  const at = ["body", "logs", 3];
  const base = { log_type: "user_login", patient_id: "pat_1", timestamp: "2026-01-01T00:00:00Z", payload: {} };

  it("echoes, for a missing envelope field, the log that lacks it (as pydantic does), and a wrong one as sent", () => {
    const { patient_id: _, ...noPatient } = base;
    const r = validateEnvelope({ ...noPatient, timestamp: "soon" }, at);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const byField = Object.fromEntries(r.details.map((d) => [d.field, d.input_value]));
    expect(byField["logs.3.patient_id"]).toEqual({ ...noPatient, timestamp: "soon" });
    expect(byField["logs.3.timestamp"]).toBe("soon");
  });

  it("refuses a timestamp outside 1900-2299, which the log query's store cannot hold (one would stop its projector)", () => {
    for (const bad of ["9999-12-31T20:00:00-05:00", "2300-01-01T00:00:00Z", "1899-12-31T23:59:59Z", "0001-01-01T00:00:00Z"]) {
      const r = validateEnvelope({ ...base, timestamp: bad }, at);
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.details[0]).toMatchObject({ field: "logs.3.timestamp", message: expect.stringContaining("between 1900-01-01") });
    }
    expect(validateEnvelope({ ...base, timestamp: "2299-12-31T23:59:59Z" }, at).ok).toBe(true);
    expect(validateEnvelope({ ...base, timestamp: "1900-01-01T00:00:00Z" }, at).ok).toBe(true);
  });

  it("refuses a payload or metadata nested deeper than 64 levels without recursing through it (a 500 before)", () => {
    const deep = JSON.parse(`${'{"a":'.repeat(6_000)}1${"}".repeat(6_000)}`) as Record<string, unknown>;
    for (const field of ["payload", "metadata"] as const) {
      const r = validateEnvelope({ ...base, [field]: field === "payload" ? { extensions: deep } : deep }, at);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.details).toEqual([expect.objectContaining({ field: `logs.3.${field}`, message: "nests deeper than 64 levels", input_value: "(too deep)" })]);
    }
  });

  it("reads a null idempotency_key as none, as it reads a null trace or metadata", () => {
    const r = validateEnvelope({ ...base, idempotency_key: null, trace: null, metadata: null }, at);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.log.idempotency_key).toBeUndefined();
  });

  it("dates a log sent without a timestamp (absent or null) at the acceptance time given, and requires one when none is given", () => {
    const { timestamp: _, ...undated } = base;
    for (const log of [undated, { ...base, timestamp: null }]) {
      expect(validateEnvelope(log, at, "2026-11-26T10:00:00.000Z")).toMatchObject({ ok: true, log: { timestamp: "2026-11-26T10:00:00.000Z" } });
      expect(validateEnvelope(log, at)).toMatchObject({ ok: false, details: [{ field: "logs.3.timestamp" }] });
    }
    expect(validateEnvelope({ ...base, timestamp: "soon" }, at, "2026-11-26T10:00:00.000Z").ok).toBe(false);
  });

  it("keeps the hosted product's envelope extras: context and log_id in metadata (the client's own keys win), write_back dropped", () => {
    const context = { environment: "production", service: "app", sdk_version: "1.11.0", sdk_language: "python" };
    const r = validateEnvelope({ ...base, log_id: "c0ffee", context, write_back: true, write_back_integration_id: null }, at);
    expect(r).toMatchObject({ ok: true, log: { client_log_id: "c0ffee", metadata: { context, log_id: "c0ffee" } } });
    const own = validateEnvelope({ ...base, log_id: "c0ffee", context, metadata: { context: "mine", log_id: "mine" } }, at);
    expect(own).toMatchObject({ ok: true, log: { metadata: { context: "mine", log_id: "mine" } } });
    const plain = validateEnvelope(base, at);
    expect(plain.ok && [plain.log.metadata, plain.log.client_log_id]).toEqual([undefined, undefined]);
  });

  it("quotes an unknown log type of a megabyte cut short in its message", () => {
    const r = validateEnvelope({ ...base, log_type: "x".repeat(1_000_000) }, at);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.code).toBe("unknown_log_type");
      expect(r.message.length).toBeLessThan(200);
      expect(r.details[0]!.message).toContain("(1000000 characters)");
    }
  });

  it("accepts a valid log and resolves a legacy alias to its canonical type", () => {
    const r = validateEnvelope({ ...base, log_type: "condition_updated", payload: { disease_type: "asthma" } }, at);
    expect(r).toMatchObject({ ok: true, log: { log_type: "condition", timestamp: "2026-01-01T00:00:00.000Z" } });
  });

  it("locates every envelope problem from the request root", () => {
    const r = validateEnvelope({ log_type: "user_login", patient_id: "has space", timestamp: "nope", payload: [], idempotency_key: "", trace: 5 }, at);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.code).toBe("validation_error");
    expect(r.details.map((d) => d.location)).toEqual([
      ["body", "logs", 3, "patient_id"],
      ["body", "logs", 3, "timestamp"],
      ["body", "logs", 3, "payload"],
      ["body", "logs", 3, "idempotency_key"],
      ["body", "logs", 3, "trace"],
    ]);
    // A timestamp that is there but wrong is not "required".
    expect(r.details[1]!.message).toMatch(/^must be an ISO 8601 datetime/);
    const missing = validateEnvelope({ log_type: "user_login", patient_id: "pat_1", payload: {} }, at);
    expect(!missing.ok && missing.details[0]!.message).toMatch(/^is required: an ISO 8601 datetime/);
  });

  it("names an unknown log type with its own code", () => {
    const r = validateEnvelope({ ...base, log_type: "telepathy" }, at);
    expect(r).toMatchObject({ ok: false, code: "unknown_log_type" });
  });

  it("prefixes payload issues with the log's location", () => {
    const r = validateEnvelope({ ...base, log_type: "spo2_reading", payload: { spo2_percent: 140 } }, at);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.details[0]).toMatchObject({ location: ["body", "logs", 3, "payload", "spo2_percent"], field: "logs.3.payload.spo2_percent", input_value: 140 });
  });

  it("accepts a trace object and metadata", () => {
    const r = validateEnvelope({ ...base, trace: { object_type: "visit", object_id: "v1" }, metadata: { app: "x" } }, at);
    expect(r).toMatchObject({ ok: true, log: { trace: { object_type: "visit", object_id: "v1" }, metadata: { app: "x" } } });
  });

  it("refuses a lone UTF-16 surrogate in any string or key of the log, located, and keeps whole characters", () => {
    // As JSON.parse reads `"\ud800"` from a body: half a character, which ClickHouse refuses.
    const parse = (json: string) => JSON.parse(json) as Record<string, unknown>;
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ ...base, trace: parse('"a\\ud800"') }, ["trace"]],
      [{ ...base, trace: { object_type: "visit", object_id: parse('"\\udc00x"') } }, ["trace", "object_id"]],
      [{ ...base, idempotency_key: parse('"k\\udbff"') }, ["idempotency_key"]],
      [{ ...base, log_id: parse('"\\ud800\\ud800"') }, ["log_id"]],
      [{ ...base, payload: { notes: ["ok", parse('"x\\ud83d"')] } }, ["payload", "notes", 1]],
      [{ ...base, metadata: parse('{"\\ud800":1}') }, ["metadata", "\ud800"]],
      [{ ...base, context: { service: parse('"\\ude00"') } }, ["context", "service"]],
      [{ ...base, write_back_integration_id: parse('"\\ud800"') }, ["write_back_integration_id"]],
    ];
    for (const [log, where] of cases) {
      const r = validateEnvelope(log, at);
      expect(r.ok, where.join(".")).toBe(false);
      if (r.ok) continue;
      expect(r.details).toEqual([expect.objectContaining({ location: [...at, ...where], message: expect.stringMatching(/not valid Unicode text: it holds half of a UTF-16 surrogate pair \(\\ud[89a-f][0-9a-f]{2} at character \d\); send the whole character/) })]);
    }
    const emoji = validateEnvelope({ ...base, trace: parse('"\\ud83d\\ude00"'), payload: { note: "pain 😀" }, metadata: { "é😀": "ok" } }, at);
    expect(emoji).toMatchObject({ ok: true, log: { trace: "😀" } });
  });

  it("refuses a trace object whose type or id is longer than 256 characters, or empty", () => {
    for (const trace of [{ object_type: "v".repeat(257), object_id: "1" }, { object_type: "visit", object_id: "1".repeat(257) }, { object_type: "", object_id: "1" }, "t".repeat(257)]) {
      const r = validateEnvelope({ ...base, trace }, at);
      expect(r).toMatchObject({ ok: false, details: [{ field: "logs.3.trace", message: 'must be a string or {"object_type","object_id"}, each of 1 to 256 characters' }] });
    }
    expect(validateEnvelope({ ...base, trace: { object_type: "v".repeat(256), object_id: "1".repeat(256) } }, at).ok).toBe(true);
  });

  it("refuses any field nested thousands deep, a trace object's extra key included, without overflowing the stack", () => {
    const deep = JSON.parse(`${"[".repeat(10_000)}${"]".repeat(10_000)}`) as unknown;
    for (const log of [{ ...base, trace: { object_type: "visit", object_id: "v1", more: deep } }, { ...base, extra: deep }]) {
      const r = validateEnvelope(log, at);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.details).toEqual([expect.objectContaining({ message: "nests deeper than 64 levels", input_value: "(too deep)" })]);
    }
  });
});
