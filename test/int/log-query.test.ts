import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
let p1: string;
let p2: string;
let p3: string;
let other: { authorization: string };
beforeAll(async () => {
  t = await startStack();
  const mk = async () => (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id as string;
  [p1, p2, p3] = [await mk(), await mk(), await mk()];
  const sym = (pid: string, ts: string, score: number, trace?: string) => ({
    log_type: "symptom_report",
    patient_id: pid,
    timestamp: ts,
    ...(trace ? { trace } : {}),
    payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }], score },
  });
  const logs = [
    sym(p1, "2026-09-01T08:00:00Z", 2, "visit-1"),
    sym(p1, "2026-09-02T08:00:00Z", 7),
    sym(p2, "2026-09-01T09:00:00Z", 4, "visit-2"),
    sym(p3, "2026-09-03T09:00:00Z", 9),
    { log_type: "user_login", patient_id: p1, timestamp: "2026-09-02T10:00:00Z", payload: {} },
  ];
  await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } });
  // Another organization with a patient and a log of its own: never visible from here.
  const org = (await t.app.inject({ method: "POST", url: "/v1/organizations", headers: t.auth, payload: { name: "Other" } })).json();
  other = { authorization: `Bearer ${org.api_key}` };
  const op = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: other, payload: {} })).json().id;
  await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: other, payload: { logs: [sym(op, "2026-09-01T08:00:00Z", 10)] } });
});
afterAll(async () => {
  await t?.close();
});

const query = (body: unknown, headers = t.auth, url = "/v1/state/logs/query") => t.app.inject({ method: "POST", url, headers, payload: body as object });

describe("the log query builder", () => {
  it("sees a batch's logs right after its answer, and only the caller's organization", async () => {
    const r = (await query({ filter: [{ field: "type", op: "eq", value: "symptom_report" }] })).json();
    expect(r.count).toBe(4);
    expect(r.rows.every((x: any) => x.payload.score !== 10)).toBe(true);
    expect(r).toMatchObject({ organization_id: "org_default", has_more: false });
    expect(r.rows[0]).toEqual({ id: expect.stringMatching(/^log_/), type: "symptom_report", timestamp: "2026-09-03T09:00:00.000Z", trace: null, payload: expect.any(Object) });
    const theirs = (await query({ filter: [{ field: "type", op: "eq", value: "symptom_report" }] }, other)).json();
    expect(theirs.count).toBe(1);
  });

  it("filters with comparisons, patterns, lists and nested or/and, orders and pages", async () => {
    const r = (
      await query({
        filter: [
          { field: "type", op: "eq", value: "symptom_report" },
          { or: [{ field: "payload.score", op: "gte", value: 7 }, { field: "trace", op: "ilike", value: "VISIT-%" }] },
        ],
        order: [{ field: "payload.score", desc: false }],
        limit: 3,
      })
    ).json();
    expect(r.rows.map((x: any) => x.payload.score)).toEqual([2, 4, 7]);
    expect(r.has_more).toBe(true);
    const inList = (await query({ filter: [{ field: "payload.score", op: "in", value: [2, 9] }] })).json();
    expect(inList.rows.map((x: any) => x.payload.score).sort()).toEqual([2, 9]);
    const nested = (await query({ filter: [{ field: "payload.symptoms.0.name", op: "eq", value: "pain" }, { field: "payload.symptoms.0.score", op: "lt", value: 5 }] })).json();
    expect(nested.count).toBe(2);
  });

  it("projects selected fields under aliases, counts, and totals", async () => {
    const r = (await query({ select: [{ path: "timestamp" }, { path: "payload.score", alias: "score" }], filter: [{ field: "type", op: "eq", value: "symptom_report" }], include_total: true, limit: 1 })).json();
    expect(r.rows).toEqual([{ timestamp: "2026-09-03T09:00:00.000Z", score: 9 }]);
    expect(r.total_count).toBe(4);
    expect((await query({ count: true, filter: [{ field: "type", op: "eq", value: "user_login" }] })).json()).toEqual({ count: 1 });
  });

  it("groups with count and average", async () => {
    const r = (await query({ group_by: ["type"], aggregations: [{ op: "count", alias: "n" }, { op: "avg", field: "payload.score", alias: "avg_score" }] })).json();
    const byType = Object.fromEntries(r.rows.map((x: any) => [x.type, x]));
    expect(byType.symptom_report).toMatchObject({ n: 4, avg_score: 5.5 });
    expect(byType.user_login).toMatchObject({ n: 1 });
  });

  it("narrows to a cohort with patient_ids, and to one patient on the patient route", async () => {
    const cohort = (await query({ patient_ids: [p1, p2], count: true })).json();
    expect(cohort.count).toBe(4);
    const one = (await query({ count: true }, t.auth, `/v1/state/${p3}/logs/query`)).json();
    expect(one.count).toBe(1);
    expect((await query({ count: true }, other, `/v1/state/${p3}/logs/query`)).statusCode).toBe(404);
  });

  it("answers single and maybe_single, and 422 when the row count does not fit", async () => {
    const single = (await query({ single: true, filter: [{ field: "type", op: "eq", value: "user_login" }] })).json();
    expect(single.rows).toHaveLength(1);
    expect((await query({ single: true, filter: [{ field: "type", op: "eq", value: "symptom_report" }] })).statusCode).toBe(422);
    expect((await query({ single: true, filter: [{ field: "type", op: "eq", value: "nothing" }] })).statusCode).toBe(422);
    expect((await query({ maybe_single: true, filter: [{ field: "type", op: "eq", value: "nothing" }] })).json().rows).toEqual([]);
    expect((await query({ maybe_single: true })).statusCode).toBe(422);
  });

  it("refuses a field outside type, timestamp, trace and payload with 422 naming it", async () => {
    const r = await query({ filter: [{ field: "patient_id", op: "eq", value: p1 }] });
    expect(r.statusCode).toBe(422);
    expect(JSON.stringify(r.json().details)).toContain("patient_id");
    expect((await query({ typed: true, select: [{ path: "timestamp" }] })).statusCode).toBe(422);
  });
});
