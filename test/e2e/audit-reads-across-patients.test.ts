import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * A read across many patients (the organization's log query, the patient list, MCP's
 * find_patient and query_logs) names no patient in its request, yet answers with their
 * data: its audit entry lists the patients it answered with, so GET /v1/audit?patient_id=
 * finds it.
 */

let t: TestStack;
const MARK = `zq${randomBytes(6).toString("hex")}`;
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };
let a: string;
let b: string;
let other: string;

interface Entry {
  method: string;
  route: string;
  tool: string | null;
  status: number;
  patient_ids: string[];
  patient_ids_omitted?: number;
}

const trail = async (pid: string): Promise<Entry[]> => {
  const r = await t.app.inject({ method: "GET", url: `/v1/audit?limit=1000&patient_id=${pid}`, headers: t.auth });
  expect(r.statusCode, r.body).toBe(200);
  return r.json().entries;
};
const post = (url: string, payload: object) => t.app.inject({ method: "POST", url, headers: t.auth, payload });
const tool = (name: string, args: object) =>
  t.app.inject({ method: "POST", url: "/mcp", headers: { ...t.auth, ...MCP_HEADERS }, payload: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name, arguments: args } } });

beforeAll(async () => {
  t = await startStack();
  const mk = async (first_name: string) => (await post("/v1/patients", { first_name, last_name: MARK })).json().id as string;
  a = await mk("Ann");
  b = await mk("Bob");
  other = (await post("/v1/patients", { first_name: "Cy", last_name: "Elsewhere" })).json().id;
  const login = (patient_id: string) => ({ log_type: "user_login", patient_id, timestamp: "2026-03-01T10:00:00Z", payload: { method: `pw${MARK}` } });
  expect((await post("/v1/logs/batch", { logs: [login(a), login(b)] })).json().accepted).toBe(2);
});
afterAll(async () => {
  await t?.close();
});

describe("reads across patients are audited with the patients they answered with", () => {
  it("lists the patients of the rows an organization-wide log query returned, even when its select leaves the patient out", async () => {
    const body = { filter: [{ field: "payload.method", op: "eq", value: `pw${MARK}` }], select: [{ path: "type" }] };
    const r = await post("/v1/state/logs/query", body);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json().rows).toEqual([{ type: "user_login" }, { type: "user_login" }]);
    for (const pid of [a, b]) {
      const queries = (await trail(pid)).filter((e) => e.route === "/v1/state/logs/query");
      expect(queries, pid).toEqual([expect.objectContaining({ status: 200, patient_ids: expect.arrayContaining([a, b]) })]);
    }
    expect((await trail(other)).filter((e) => e.route === "/v1/state/logs/query")).toEqual([]);
  });

  it("lists the patients whose logs made the groups of an aggregate query", async () => {
    const r = await post("/v1/state/logs/query", { filter: [{ field: "payload.method", op: "eq", value: `pw${MARK}` }], group_by: ["type"], aggregations: [{ op: "count", alias: "n" }] });
    expect(r.json().rows).toEqual([{ type: "user_login", n: 2 }]);
    const groups = (await trail(a)).filter((e) => e.route === "/v1/state/logs/query");
    expect(groups.at(-1)).toMatchObject({ status: 200, patient_ids: expect.arrayContaining([a, b]) });
    expect(groups.at(-1)!.patient_ids_omitted).toBeUndefined();
  });

  it("lists the patients GET /v1/patients answered with", async () => {
    const r = await t.app.inject({ method: "GET", url: `/v1/patients?name=${MARK}`, headers: t.auth });
    expect(r.json().patients.map((p: { id: string }) => p.id).sort()).toEqual([a, b].sort());
    expect((await trail(a)).filter((e) => e.method === "GET" && e.route === "/v1/patients")).toEqual([expect.objectContaining({ status: 200, patient_ids: expect.arrayContaining([a, b]) })]);
    expect((await trail(other)).filter((e) => e.method === "GET" && e.route === "/v1/patients")).toEqual([]);
  });

  it("lists the candidates of find_patient and the patients of query_logs' rows", async () => {
    expect((await tool("find_patient", { name: MARK })).json().result.structuredContent.count).toBe(2);
    expect((await tool("query_logs", { filter: [{ field: "payload.method", op: "eq", value: `pw${MARK}` }], select: [{ path: "type" }] })).json().result.structuredContent.count).toBe(2);
    const calls = (await trail(b)).filter((e) => e.route === "/mcp").map((e) => [e.tool, e.status, [...e.patient_ids].sort()]);
    expect(calls).toEqual([
      ["tools/call find_patient", 200, [a, b].sort()],
      ["tools/call query_logs", 200, [a, b].sort()],
    ]);
  });
});
