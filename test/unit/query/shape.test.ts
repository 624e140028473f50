import { describe, expect, it } from "vitest";
import { auditedPatients, compileLogQuery, countOf, pageRows, shapeRows } from "../../../query/index.js";

const org = { organization_id: "org_1", project_id: "prj_1" };
const q = (body: Record<string, unknown>) => compileLogQuery(body, org);

describe("shapeRows", () => {
  it("answers default rows with ISO times, the trace as {object_type, object_id} or null, and the payload parsed", () => {
    const at = { timestamp: "2025-03-01 10:00:00.000", ingested_at: "2025-03-02 08:00:00.125" };
    const raw = [
      { id: "L1", type: "symptom_report", ...at, trace: "", trace_type: "", payload: '{"score":4,"symptoms":[{"name":"pain"}]}' },
      { id: "L2", type: "vitals", ...at, trace: "visit:v1", trace_type: "visit", payload: "{}" },
      { id: "L3", type: "vitals", ...at, trace: "visit:v1:a", trace_type: "", payload: "{}" },
    ];
    const times = { timestamp: "2025-03-01T10:00:00.000Z", ingested_at: "2025-03-02T08:00:00.125Z" };
    expect(shapeRows(q({}), raw)).toEqual([
      { id: "L1", type: "symptom_report", ...times, trace: null, payload: { score: 4, symptoms: [{ name: "pain" }] } },
      { id: "L2", type: "vitals", ...times, trace: { object_type: "visit", object_id: "v1" }, payload: {} },
      // A trace sent as a plain string has no type: the whole text is the id.
      { id: "L3", type: "vitals", ...times, trace: { object_type: null, object_id: "visit:v1:a" }, payload: {} },
    ]);
  });

  it("answers a selected trace as the same object, and an array select as its first kept element or the list", () => {
    const c = q({ select: [
      { path: "trace" },
      { path: "payload.symptoms", first: true, alias: "worst" },
      { path: "payload.symptoms", first: false, element: "name", alias: "names" },
      { path: "payload.tags", first: true, alias: "none" },
    ] });
    const raw = [{ s0: ["visit", "visit:v1"], s1: '{"name":"pain","score":7}', s2: ['"pain"', "", "3"], s3: "" }];
    expect(shapeRows(c, raw)).toEqual([{ trace: { object_type: "visit", object_id: "v1" }, worst: { name: "pain", score: 7 }, names: ["pain", null, 3], none: null }]);
    expect(shapeRows(c, [{ s0: ["", ""], s1: "", s2: [], s3: "" }])).toEqual([{ trace: null, worst: null, names: [], none: null }]);
  });

  it("answers only the selected keys, alias else path, with JSON values parsed and missing paths null", () => {
    const c = q({ select: [{ path: "timestamp" }, { path: "payload.score", alias: "score" }, { path: "payload.tags" }, { path: "payload.gone" }, { path: "trace" }] });
    const raw = [{ s0: "2025-03-01 10:00:00.000", s1: "4.5", s2: '["a","b"]', s3: "", s4: ["", ""] }];
    expect(shapeRows(c, raw)).toEqual([{ timestamp: "2025-03-01T10:00:00.000Z", score: 4.5, "payload.tags": ["a", "b"], "payload.gone": null, trace: null }]);
  });

  it("keeps JSON strings, booleans and null as such", () => {
    const c = q({ select: [{ path: "payload.a", alias: "a" }, { path: "payload.b", alias: "b" }, { path: "payload.c", alias: "c" }] });
    expect(shapeRows(c, [{ s0: '"x"', s1: "true", s2: "null" }])).toEqual([{ a: "x", b: true, c: null }]);
  });

  it("answers group rows with the group keys and each aggregation as a number", () => {
    const c = q({
      group_by: ["type", "payload.severity"],
      aggregations: [{ op: "count", alias: "n" }, { op: "avg", field: "payload.score", alias: "avg_score" }, { op: "max", field: "timestamp", alias: "last" }],
    });
    const raw = [
      { g0: "symptom_report", g1: '"high"', a0: "12", a1: 3.25, a2: "2025-03-01 10:00:00.000" },
      { g0: "vitals", g1: "", a0: 3, a1: null, a2: "2025-03-02 00:00:00.000" },
    ];
    expect(shapeRows(c, raw)).toEqual([
      { type: "symptom_report", "payload.severity": "high", n: 12, avg_score: 3.25, last: "2025-03-01T10:00:00.000Z" },
      { type: "vitals", "payload.severity": null, n: 3, avg_score: null, last: "2025-03-02T00:00:00.000Z" },
    ]);
  });

  it("answers only the selected group keys when select names them", () => {
    const c = q({ group_by: ["type", "payload.flag"], select: [{ path: "payload.flag", alias: "flag" }], aggregations: [{ op: "count", alias: "n" }] });
    expect(shapeRows(c, [{ g0: "vitals", g1: "false", a0: "2" }])).toEqual([{ flag: false, n: 2 }]);
  });

  it("answers a count as a number", () => {
    const c = q({ count: true });
    expect(shapeRows(c, [{ n: "42" }])).toEqual([{ count: 42 }]);
    expect(countOf([{ n: 7 }])).toBe(7);
    expect(countOf([])).toBe(0);
  });
});

describe("pageRows", () => {
  const row = (i: number) => ({ id: `L${i}`, type: "t", timestamp: "2025-03-01 10:00:00.000", trace: "", payload: "{}" });

  it("drops the extra row the SQL fetched and reports has_more", () => {
    const c = q({ limit: 2 });
    expect(pageRows(c, [row(1), row(2), row(3)])).toMatchObject({ has_more: true, rows: [{ id: "L1" }, { id: "L2" }] });
    expect(pageRows(c, [row(1), row(2)]).has_more).toBe(false);
  });

  it("keeps a second row for single so the caller can refuse it", () => {
    const c = q({ single: true });
    expect(pageRows(c, [row(1), row(2)]).rows).toHaveLength(2);
  });
});

describe("auditedPatients", () => {
  it("names each answered row's patient, never the extra row, and never answers the audit column", () => {
    const c = q({ select: [{ path: "type" }], limit: 2 });
    const raw = [
      { s0: "user_login", audit_patient_id: "pat_a" },
      { s0: "user_login", audit_patient_id: "pat_b" },
      { s0: "user_login", audit_patient_id: "pat_c" },
    ];
    expect(auditedPatients(c, raw)).toEqual({ ids: ["pat_a", "pat_b"], omitted: 0 });
    expect(pageRows(c, raw).rows).toEqual([{ type: "user_login" }, { type: "user_login" }]);
  });

  it("names each group's listed patients and counts those past a group's list", () => {
    const c = q({ group_by: ["type"], aggregations: [{ op: "count", alias: "n" }] });
    const raw = [
      { g0: "a", a0: "3", audit_patient_ids: ["pat_a", "pat_b"], audit_patient_count: "3" },
      { g0: "b", a0: "1", audit_patient_ids: ["pat_b"], audit_patient_count: 1 },
    ];
    expect(auditedPatients(c, raw)).toEqual({ ids: ["pat_a", "pat_b"], omitted: 1 });
    expect(pageRows(c, raw).rows).toEqual([{ type: "a", n: 3 }, { type: "b", n: 1 }]);
  });

  it("names no patient for a count", () => {
    expect(auditedPatients(q({ count: true }), [{ n: 4 }])).toEqual({ ids: [], omitted: 0 });
  });
});
