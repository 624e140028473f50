import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { def, expectSdkParses, opt, req, SDK_LOG_ENTRY, sdkClient, sdkOutcome, type SdkClient, type Shape } from "../../support/olira-sdk.js";

/** The query answer as the SDK's result model reads it (olira-compat §7). */
const QUERY_RESULT: Shape = {
  count: req("int"),
  rows: def("list", { of: "object" }),
  organization_id: opt("string"),
  patient_id: opt("string"),
  total_count: opt("int"),
  has_more: opt("bool"),
};

let t: TestStack;
let sdk: SdkClient;
let [p1, p2, p3] = ["", "", ""];
/** Log ids by name: L1-L3 of p1, L4 of p2, L5 of p3 (days 1-5 of October 2026). */
const ids: Record<string, string> = {};

const symptoms = (...s: [string, number][]) => ({ instrument: "esas_r", symptoms: s.map(([name, score]) => ({ name, score })) });
const day = (d: number) => `2026-10-0${d}T08:00:00Z`;

beforeAll(async () => {
  t = await startStack();
  sdk = sdkClient(t.app, t.adminKey);
  const patient = async () => (await sdk.post("/v1/patients", { sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id as string;
  [p1, p2, p3] = [await patient(), await patient(), await patient()];
  const logs = [
    // As log_batch() sends them: null keys dropped, the trace an object.
    { log_type: "symptom_report", patient_id: p1, timestamp: day(1), payload: symptoms(["pain", 7], ["nausea", 2], ["tiredness", 5]), trace: { object_type: "conversation", object_id: "conv-1" } },
    // A plain string trace, as this service's own contract allows.
    { log_type: "symptom_report", patient_id: p1, timestamp: day(2), payload: symptoms(["pain", 3]), trace: "visit-7" },
    {
      log_type: "content_interaction", patient_id: p1, timestamp: day(3),
      payload: {
        content_type: "article", action: "viewed", tags: ["sleep", "diet"],
        items: [{ id: "a", rating: 4, meta: { lang: "en" }, labels: ["new", "top"] }, { id: "b", rating: null }, { id: "c", rating: 2 }],
      },
    },
    { log_type: "symptom_report", patient_id: p2, timestamp: day(1).replace("08", "09"), payload: symptoms(["pain", 9]), trace: { object_type: "conversation", object_id: "conv-2" } },
    { log_type: "user_login", patient_id: p3, timestamp: day(5), payload: {} },
  ];
  const r = await sdk.post("/v1/logs/batch", { logs });
  expect(r.json()).toMatchObject({ accepted: 5, failed: 0 });
  r.json().results.forEach((x: { id: string }, i: number) => (ids[`L${i + 1}`] = x.id));
});
afterAll(async () => {
  await t?.close();
});

/** POST /v1/state/{pid}/logs/query as `logs(pid)` sends it; the answer checked against the SDK's model. */
async function patientQuery(pid: string, body: Record<string, unknown>) {
  const r = await sdk.post(`/v1/state/${pid}/logs/query`, body);
  expect(r.statusCode, r.body).toBe(200);
  expectSdkParses(r.json(), QUERY_RESULT);
  return r.json();
}
/** POST /v1/state/logs/query as `population_logs(patient_ids)` sends it. */
async function populationQuery(body: Record<string, unknown>) {
  const r = await sdk.post("/v1/state/logs/query", body);
  expect(r.statusCode, r.body).toBe(200);
  expectSdkParses(r.json(), QUERY_RESULT);
  return r.json();
}
const F = (field: string, op: string, value: unknown) => ({ field, op, value });
/** The day of each row's timestamp (rows selected with `timestamp`). */
const days = (a: { rows: { timestamp: string }[] }) => a.rows.map((r) => Number(r.timestamp.slice(8, 10)));
const byTime = [{ field: "timestamp", desc: false }];

describe("the SDK's log query builder against the query routes", () => {
  it("answers full rows readable by as_logs(): the trace as {object_type, object_id} (null type for a string trace) or null, and ingested_at", async () => {
    const a = await patientQuery(p1, { order: byTime });
    expect(a).toMatchObject({ count: 3, organization_id: "org_default", patient_id: p1, has_more: false });
    for (const row of a.rows) expectSdkParses(row, SDK_LOG_ENTRY);
    expect(a.rows.map((r: any) => [r.id, r.type, r.timestamp, r.trace])).toEqual([
      [ids.L1, "symptom_report", "2026-10-01T08:00:00.000Z", { object_type: "conversation", object_id: "conv-1" }],
      [ids.L2, "symptom_report", "2026-10-02T08:00:00.000Z", { object_type: null, object_id: "visit-7" }],
      [ids.L3, "content_interaction", "2026-10-03T08:00:00.000Z", null],
    ]);
    expect(a.rows[0].payload).toEqual(symptoms(["pain", 7], ["nausea", 2], ["tiredness", 5]));
    // ingested_at and trace as GET /logs answers them for the same log.
    const logs = (await sdk.get(`/v1/state/${p1}/logs`, { limit: 50 })).json().logs;
    for (const row of a.rows) {
      const log = logs.find((l: any) => l.id === row.id);
      expect([row.ingested_at, row.trace]).toEqual([log.ingested_at, log.trace]);
    }

    const cohort = await populationQuery({ patient_ids: [p1, p2], filter: [F("trace", "ilike", "conversation:%")], order: byTime });
    expect(cohort).toMatchObject({ count: 2, organization_id: "org_default", patient_id: null });
    for (const row of cohort.rows) expectSdkParses(row, SDK_LOG_ENTRY);
    expect(cohort.rows.map((r: any) => r.trace)).toEqual([{ object_type: "conversation", object_id: "conv-1" }, { object_type: "conversation", object_id: "conv-2" }]);
  });

  it.each([
    ["eq", F("type", "eq", "symptom_report"), [1, 2]],
    ["neq", F("type", "neq", "symptom_report"), [3]],
    ["gt", F("payload.symptoms.0.score", "gt", 5), [1]],
    ["gte", F("payload.symptoms.0.score", "gte", 3), [1, 2]],
    ["lt", F("payload.symptoms.0.score", "lt", 5), [2]],
    ["lte", F("timestamp", "lte", "2026-10-02T08:00:00Z"), [1, 2]],
    ["in", F("type", "in", ["symptom_report", "content_interaction"]), [1, 2, 3]],
    ["nin", F("type", "nin", ["content_interaction"]), [1, 2]],
    ["like", F("payload.instrument", "like", "esas%"), [1, 2]],
    ["ilike on a string trace", F("trace", "ilike", "VISIT-%"), [2]],
    ["eq on an object trace's type:id text", F("trace", "eq", "conversation:conv-1"), [1]],
    ["is null", F("trace", "is", null), [3]],
    ["is not_null", F("payload.tags", "is", "not_null"), [3]],
    ["exists", F("payload.items", "exists", true), [3]],
    ["exists false", F("payload.items", "exists", false), [1, 2]],
    ["contains", F("payload.tags", "contains", "diet"), [3]],
    ["or with a nested and", { or: [F("payload.symptoms.0.score", "gt", 6), { and: [F("type", "eq", "content_interaction"), F("payload.tags", "contains", "sleep")] }] }, [1, 3]],
    ["and", { and: [F("type", "eq", "symptom_report"), F("payload.symptoms.0.score", "lt", 5)] }, [2]],
  ])("filters with %s as the SDK sends it", async (_op, node, want) => {
    expect(days(await patientQuery(p1, { filter: [node], select: [{ path: "timestamp" }], order: byTime }))).toEqual(want);
  });

  it("selects paths with and without an alias, and array selects with first, where and element", async () => {
    const a = await patientQuery(p1, {
      filter: [F("type", "eq", "symptom_report")],
      select: [
        { path: "timestamp" },
        { path: "payload.symptoms.0.score", alias: "score" },
        { path: "trace" },
        { path: "payload.symptoms", first: true, alias: "first_severe", where: F("score", "gte", 5), element: "name" },
        { path: "payload.symptoms", first: false, alias: "severe", where: F("score", "gte", 5), element: "name" },
        { path: "payload.symptoms", first: false, alias: "named", where: { or: [F("name", "eq", "nausea"), F("score", "gt", 6)] }, element: "name" },
        { path: "payload.symptoms", first: false, alias: "mild", where: F("score", "lt", 5), element: "payload.symptoms.name" },
        { path: "payload.symptoms", first: true },
      ],
      order: byTime,
    });
    expect(a.rows).toEqual([
      {
        timestamp: "2026-10-01T08:00:00.000Z", score: 7, trace: { object_type: "conversation", object_id: "conv-1" },
        first_severe: "pain", severe: ["pain", "tiredness"], named: ["pain", "nausea"], mild: ["nausea"], "payload.symptoms": { name: "pain", score: 7 },
      },
      {
        timestamp: "2026-10-02T08:00:00.000Z", score: 3, trace: { object_type: null, object_id: "visit-7" },
        first_severe: null, severe: [], named: [], mild: ["pain"], "payload.symptoms": { name: "pain", score: 3 },
      },
    ]);
  });

  it("supports every where op on array elements, the array's own path naming a scalar element", async () => {
    const pick = (where: unknown, element = "id") => ({ path: "payload.items", first: false, where, element });
    const cases: [unknown, unknown][] = [
      [F("id", "neq", "b"), ["a", "c"]], [F("rating", "gt", 2), ["a"]], [F("rating", "gte", 2), ["a", "c"]], [F("rating", "lt", 3), ["c"]],
      [F("rating", "lte", 4), ["a", "c"]], [F("id", "in", ["a", "c"]), ["a", "c"]], [F("id", "nin", ["a"]), ["b", "c"]], [F("id", "like", "b%"), ["b"]],
      [F("id", "ilike", "A"), ["a"]], [F("rating", "is", null), ["b"]], [F("meta.lang", "exists", true), ["a"]], [F("labels", "contains", "top"), ["a"]],
    ];
    const select = [
      ...cases.map(([where], i) => ({ ...pick(where), alias: `c${i}` })),
      { path: "payload.items", first: false, element: "rating", alias: "ratings" },
      { path: "payload.items", first: true, element: "meta.lang", alias: "lang" },
      { path: "payload.tags", first: false, where: F("payload.tags", "like", "s%"), alias: "s_tags" },
      { path: "payload.tags", first: true, where: F("payload.tags", "eq", "nothing"), alias: "no_tag" },
      { path: "payload.missing", first: false, alias: "none" },
    ];
    const [row] = (await patientQuery(p1, { filter: [F("type", "eq", "content_interaction")], select })).rows;
    cases.forEach(([, want], i) => expect(row[`c${i}`], JSON.stringify(cases[i]![0])).toEqual(want));
    expect(row).toMatchObject({ ratings: [4, null, 2], lang: "en", s_tags: ["sleep"], no_tag: null, none: [] });
  });

  it("orders and pages with limit and offset, including the range(a, b) form, telling has_more", async () => {
    const desc = await patientQuery(p1, { select: [{ path: "timestamp" }], order: [{ field: "timestamp", desc: true }], limit: 2 });
    expect([days(desc), desc.has_more]).toEqual([[3, 2], true]);
    // range(1, 2): offset 1, limit 2 - 1 + 1.
    const range = await patientQuery(p1, { select: [{ path: "timestamp" }], order: byTime, offset: 1, limit: 2 });
    expect([days(range), range.has_more, range.count]).toEqual([[2, 3], false, 2]);
    const first = await patientQuery(p1, { select: [{ path: "timestamp" }], order: byTime, offset: 0, limit: 1 });
    expect([days(first), first.has_more]).toEqual([[1], true]);
  });

  it("groups with aggregations, and answers count: true with the count alone", async () => {
    const g = await patientQuery(p1, { group_by: ["type"], aggregations: [{ op: "count", alias: "n" }, { op: "avg", alias: "avg_score", field: "payload.symptoms.0.score" }, { op: "max", alias: "last", field: "timestamp" }] });
    expect(g.rows).toEqual([
      { type: "content_interaction", n: 1, avg_score: null, last: "2026-10-03T08:00:00.000Z" },
      { type: "symptom_report", n: 2, avg_score: 5, last: "2026-10-02T08:00:00.000Z" },
    ]);
    const counted = await sdk.post(`/v1/state/${p1}/logs/query`, { filter: [F("type", "eq", "symptom_report")], count: true });
    expect(counted.json()).toEqual({ count: 2 });
    expectSdkParses(counted.json(), QUERY_RESULT);
    const all = await populationQuery({ count: true });
    expect(all.count).toBe(5);
    expect((await populationQuery({ patient_ids: [p1, p2], filter: [F("type", "eq", "symptom_report")], count: true })).count).toBe(3);
  });

  it("reads the whole organization without patient_ids, and a cohort with them", async () => {
    const org = await populationQuery({ select: [{ path: "type" }], order: byTime, limit: 10 });
    expect(org.rows.map((r: any) => r.type)).toContain("user_login");
    const cohort = await populationQuery({ patient_ids: [p3], order: byTime });
    expect(cohort.rows.map((r: any) => r.id)).toEqual([ids.L5]);
    expectSdkParses(cohort.rows[0], SDK_LOG_ENTRY);
  });

  it("refuses an array select the service cannot run with a 422 (the SDK's ValidationError) saying what to change", async () => {
    for (const [item, says] of [
      [{ path: "trace", first: true }, "select.0.path: an array select reads an array in the payload: path must be a payload path"],
      [{ path: "payload.symptoms", first: true, where: F("score", "regex", 5) }, "select.0.where.op must be equal to one of the allowed values: eq,"],
      [{ path: "payload.symptoms", first: true, where: F("score", "in", 5) }, "select.0.where.value: must be a non-empty array"],
      [{ path: "payload.symptoms", first: "yes" }, "select.0.first must be boolean"],
    ] as const) {
      const r = await sdk.post(`/v1/state/${p1}/logs/query`, { select: [item] });
      expect(sdkOutcome(r.statusCode)).toBe("validation");
      expect(r.body.slice(0, 500)).toContain(says);
    }
  });
});
