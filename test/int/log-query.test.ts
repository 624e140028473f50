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
    expect(r.rows[0]).toEqual({ id: expect.stringMatching(/^log_/), type: "symptom_report", timestamp: "2026-09-03T09:00:00.000Z", ingested_at: expect.stringMatching(/^20\d\d-.*Z$/), trace: null, payload: expect.any(Object) });
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

  it("answers min and max: numbers when the path holds any, else text; null, not 1970, over no logs", async () => {
    const r = (
      await query({
        filter: [{ field: "type", op: "eq", value: "symptom_report" }],
        aggregations: [
          { op: "min", field: "payload.score", alias: "lo" },
          { op: "max", field: "payload.instrument", alias: "instrument" },
          { op: "max", field: "timestamp", alias: "last" },
        ],
      })
    ).json();
    expect(r.rows).toEqual([{ lo: 2, instrument: "esas_r", last: "2026-09-03T09:00:00.000Z" }]);
    const none = (
      await query({ filter: [{ field: "timestamp", op: "gt", value: "2030-01-01T00:00:00Z" }], aggregations: [{ op: "count", alias: "n" }, { op: "max", field: "timestamp", alias: "last" }, { op: "min", field: "payload.score", alias: "lo" }] })
    ).json();
    expect(none.rows).toEqual([{ n: 0, last: null, lo: null }]);
  });

  it("refuses __proto__ as an alias, which would vanish from the answer rows", async () => {
    const r = await query({ aggregations: [{ op: "count", alias: "__proto__" }] });
    expect(r.statusCode).toBe(422);
  });

  it("reads a trace filter value in the batch route's object form as object_type:object_id", async () => {
    const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    const sent = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: [{ log_type: "user_logout", patient_id: pid, timestamp: "2026-09-05T08:00:00Z", trace: { object_type: "visit", object_id: "v9" }, payload: {} }] } });
    expect(sent.json().accepted).toBe(1);
    const trace = { object_type: "visit", object_id: "v9" };
    for (const f of [{ field: "trace", op: "eq", value: trace }, { field: "trace", op: "in", value: [trace, "other"] }]) {
      const r = await query({ filter: [f] });
      expect(r.statusCode).toBe(200);
      expect(r.json().rows.map((x: any) => x.trace)).toEqual([{ object_type: "visit", object_id: "v9" }]);
    }
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

  it("reads payload numbers through the JSON column with the text's semantics, and everything else from the text", async () => {
    const p4 = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id as string;
    const ci = (minute: number, extra: Record<string, unknown>) => ({
      log_type: "content_interaction", patient_id: p4, timestamp: `2026-09-05T10:${String(minute).padStart(2, "0")}:00Z`, payload: { content_type: "card", action: "viewed", ...extra },
    });
    const batch = await t.app.inject({
      method: "POST", url: "/v1/logs/batch", headers: t.auth,
      payload: { logs: [
        ci(1, { v: 5, tag: "alpha", nested: { n: 1 }, list: [1, 2] }),
        ci(2, { v: "7", nested: { n: null } }),
        ci(3, { v: "abc", nested: { n: 2.5 } }),
        ci(4, { v: null }),
        ci(5, {}),
        ci(6, { v: true }),
      ] },
    });
    expect(batch.statusCode).toBe(200);
    const ask = async (body: Record<string, unknown>) => {
      const r = await query(body, t.auth, `/v1/state/${p4}/logs/query`);
      expect(r.statusCode, r.body).toBe(200);
      return r.json();
    };
    const minutes = (r: any) => r.rows.map((x: any) => Number(x.timestamp.slice(14, 16)));
    const where = (field: string, op: string, value: unknown) => ask({ filter: [{ field, op, value }], order: [{ field: "timestamp" }], select: [{ path: "timestamp" }] });
    // Numbers: numeric strings count, true reads as 1, missing and null never match (neq and nin included).
    expect(minutes(await where("payload.v", "gt", 4))).toEqual([1, 2]);
    expect(minutes(await where("payload.v", "eq", 1))).toEqual([6]);
    expect(minutes(await where("payload.v", "nin", [5]))).toEqual([2, 6]);
    expect(minutes(await where("payload.nested.n", "lt", 2))).toEqual([1]);
    expect(minutes(await where("payload.list.1", "eq", 2))).toEqual([1]);
    // Text ops, presence and membership still read the exact text.
    expect(minutes(await where("payload.v", "like", "ab%"))).toEqual([3]);
    // An escaped trailing backslash runs (and matches only a literal backslash).
    expect(minutes(await where("payload.v", "like", "ab\\\\"))).toEqual([]);
    expect(minutes(await where("payload.v", "eq", "7"))).toEqual([2]);
    expect(minutes(await where("payload.v", "is", null))).toEqual([4, 5]);
    expect(minutes(await where("payload.v", "exists", false))).toEqual([5]);
    expect(minutes(await where("payload.nested.n", "exists", true))).toEqual([1, 2, 3]);
    expect(minutes(await where("payload.list", "contains", 2))).toEqual([1]);
    expect(minutes(await where("payload.tag", "contains", "lph"))).toEqual([1]);
    // Aggregations over the numbers that are there; groups keyed by the JSON value.
    expect((await ask({ aggregations: [{ op: "avg", field: "payload.v", alias: "avg" }, { op: "min", field: "payload.nested.n", alias: "lo" }, { op: "max", field: "payload.nested.n", alias: "hi" }, { op: "count", alias: "n" }] })).rows)
      .toEqual([{ avg: 13 / 3, lo: 1, hi: 2.5, n: 6 }]);
    const groups = (await ask({ group_by: ["payload.v"], aggregations: [{ op: "count", alias: "n" }] })).rows;
    expect(groups.filter((g: any) => g["payload.v"] !== null)).toEqual(expect.arrayContaining([{ "payload.v": 5, n: 1 }, { "payload.v": "7", n: 1 }, { "payload.v": "abc", n: 1 }, { "payload.v": true, n: 1 }]));
    expect(groups.filter((g: any) => g["payload.v"] === null).reduce((a: number, g: any) => a + g.n, 0)).toBe(2);
    // Order: numbers (numeric strings and booleans read as numbers) ascending, then text, then nothing.
    // (Null and missing tie; ties go by log id.)
    const asc = minutes(await ask({ order: [{ field: "payload.v" }], select: [{ path: "timestamp" }] }));
    expect([asc.slice(0, 4), asc.slice(4).sort()]).toEqual([[6, 1, 2, 3], [4, 5]]);
    const desc = minutes(await ask({ order: [{ field: "payload.v", desc: true }], select: [{ path: "timestamp" }] }));
    expect([desc.slice(0, 4), desc.slice(4).sort()]).toEqual([[2, 1, 6, 3], [4, 5]]);
  });

  it("refuses a payload path segment outside the strict pattern with 422 naming the field", async () => {
    for (const field of ["payload.v-x", "payload.a`b", "payload.score`) OR 1=1 --"]) {
      for (const body of [{ filter: [{ field, op: "gt", value: 1 }] }, { group_by: [field], aggregations: [{ op: "count", alias: "n" }] }]) {
        const r = await query(body);
        expect(r.statusCode).toBe(422);
        const detail = r.json().details.find((d: any) => d.input_value === field);
        expect(detail, r.body).toBeDefined();
        expect(detail.message).toContain(JSON.stringify(field));
      }
    }
  });

  it("refuses a field outside type, timestamp, trace and payload with 422 naming it", async () => {
    const r = await query({ filter: [{ field: "patient_id", op: "eq", value: p1 }] });
    expect(r.statusCode).toBe(422);
    expect(JSON.stringify(r.json().details)).toContain("patient_id");
    expect((await query({ typed: true, select: [{ path: "timestamp" }] })).statusCode).toBe(422);
  });
});
