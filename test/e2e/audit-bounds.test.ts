import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let pid: string;
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };
const MEGABYTE = "x".repeat(1024 * 1024);

interface Entry {
  route: string;
  method: string;
  tool: string | null;
  status: number;
  patient_id: string | null;
  patient_ids: string[];
  patient_ids_omitted?: number;
}

/** The trail as it is the moment an answer arrives: no waiting, since the answer waits for its entry. */
async function trail(query = ""): Promise<Entry[]> {
  const r = await t.app.inject({ method: "GET", url: `/v1/audit?limit=1000${query}`, headers: t.auth });
  expect(r.statusCode).toBe(200);
  return r.json().entries;
}

beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

describe("an audit entry always fits", () => {
  it("records a batch whose other log names a 1 MB patient id, listing the valid patient and counting the other", async () => {
    const logs = [
      { log_type: "user_login", patient_id: pid, timestamp: "2026-03-01T10:00:00Z", payload: {} },
      { log_type: "user_login", patient_id: MEGABYTE, timestamp: "2026-03-01T10:00:00Z", payload: {} },
    ];
    const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } });
    const batch = (await trail()).filter((e) => e.route === "/v1/logs/batch");
    expect(batch).toEqual([expect.objectContaining({ status: r.statusCode, patient_ids: [pid], patient_ids_omitted: 1 })]);
  });

  it("refuses a cohort query naming a 1 MB patient id, or more than 1,000, with 422 before reading anyone's rows, and audits the refusal", async () => {
    const huge = await t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: t.auth, payload: { patient_ids: [pid, MEGABYTE] } });
    expect(huge.statusCode).toBe(422);
    expect(huge.json()).toMatchObject({ error: true, error_type: "validation_error", details: [expect.objectContaining({ location: ["body", "patient_ids", 1] })] });
    expect(huge.json().rows).toBeUndefined();
    const many = Array.from({ length: 1_001 }, (_, i) => `pat_${i}`);
    const tooMany = await t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: t.auth, payload: { patient_ids: many } });
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json().details[0]).toMatchObject({ location: ["body", "patient_ids"] });
    const ok = await t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: t.auth, payload: { patient_ids: many.slice(0, 1_000) } });
    expect(ok.statusCode).toBe(200);
    const queries = (await trail()).filter((e) => e.route === "/v1/state/logs/query");
    expect(queries.map((e) => [e.status, e.patient_ids.length, e.patient_ids_omitted])).toEqual([
      [422, 1, 1],
      [422, 1_001, undefined],
      [200, 1_000, undefined],
    ]);
  });

  it("records an MCP resource read of a 1 MB URI with the URI cut short", async () => {
    const uri = `patient://${pid}/views/${MEGABYTE}`;
    const r = await t.app.inject({ method: "POST", url: "/mcp", headers: { ...t.auth, ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri } } });
    expect(r.statusCode).toBe(200);
    const reads = (await trail()).filter((e) => e.route === "/mcp");
    expect(reads).toHaveLength(1);
    expect(reads[0]!.tool).toMatch(/^resources\/read patient:\/\/.{1,300}… \(\d+ characters\)$/);
    expect(reads[0]!.patient_ids).toEqual([pid]);
  });
});

describe("GET /v1/audit's time bounds and cursor", () => {
  it("refuses a leap second in since and until, as /logs does, and takes its minute's last millisecond", async () => {
    for (const name of ["since", "until"]) {
      const r = await t.app.inject({ method: "GET", url: `/v1/audit?${name}=2016-12-31T23:59:60Z`, headers: t.auth });
      expect(r.statusCode).toBe(422);
      expect(r.json().details[0]).toMatchObject({ location: ["query", name], message: expect.stringContaining("leap second") });
    }
    const since = await t.app.inject({ method: "GET", url: "/v1/audit?since=2016-12-31T23:59:59.999Z", headers: t.auth });
    expect(since.statusCode).toBe(200);
    expect(since.json().count).toBeGreaterThan(0);
    expect((await t.app.inject({ method: "GET", url: "/v1/audit?since=2016-12-31", headers: t.auth })).statusCode).toBe(200);
  });

  it("answers a malformed since, until or cursor with 422 and the spec's body naming the parameter", async () => {
    const cases: [string, string][] = [
      ["since", "garbage"], ["since", "2026-02-30T00:00:00Z"], ["until", "2026-03-01T10:00:00"], ["since", ""], ["until", "2026-13-01"],
      ["cursor", "99999999999999999999999"], ["cursor", "-1"], ["cursor", "1.5"], ["cursor", "abc"], ["cursor", ""],
    ];
    for (const [name, value] of cases) {
      const r = await t.app.inject({ method: "GET", url: `/v1/audit?${name}=${encodeURIComponent(value)}`, headers: t.auth });
      expect(r.statusCode, `${name}=${value}`).toBe(422);
      expect(r.json(), `${name}=${value}`).toMatchObject({ error: true, status_code: 422, error_type: "validation_error", details: [{ field: name, location: ["query", name] }] });
    }
    const reversed = await t.app.inject({ method: "GET", url: "/v1/audit?since=2026-03-02&until=2026-03-01", headers: t.auth });
    expect(reversed.statusCode).toBe(422);
  });
});
