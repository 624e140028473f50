import { describe, expect, it } from "vitest";
import { compileLogQuery } from "../../../query/index.js";

const org = { organization_id: "org_1", project_id: "prj_1" };
const q = (body: Record<string, unknown>) => compileLogQuery(body, org);
/** The SQL of select column 0. */
const col0 = (body: Record<string, unknown>) => /^SELECT (.*) AS s0, patient_id AS audit_patient_id\n/.exec(q(body).sql)![1];
const array = (more: Record<string, unknown>) => col0({ select: [{ path: "payload.symptoms", first: false, ...more }] });

describe("compileLogQuery: array selects", () => {
  it("reads the array's elements as raw JSON text, its path bound, and answers the list or the first", () => {
    const c = q({ select: [{ path: "payload.symptoms", first: false }] });
    expect(c.sql).toMatch(/^SELECT JSONExtractArrayRaw\(payload, \{k0:String\}\) AS s0, patient_id AS audit_patient_id\n/);
    expect(c.params.k0).toBe("symptoms");
    expect(c.shape.select).toEqual([{ key: "payload.symptoms", path: "payload.symptoms", array: "list" }]);
    const first = q({ select: [{ path: "payload.symptoms", first: true, alias: "s" }] });
    expect(first.sql).toMatch(/^SELECT arrayElement\(JSONExtractArrayRaw\(payload, \{k0:String\}\), 1\) AS s0, patient_id AS audit_patient_id\n/);
    expect(first.shape.select).toEqual([{ key: "s", path: "payload.symptoms", array: "first" }]);
  });

  it("keeps elements with where, its fields read inside the element (the lambda's el) with values bound", () => {
    expect(array({ where: { field: "score", op: "gte", value: 7 } })).toBe(
      "arrayFilter(el -> JSONExtract(el, {k0:String}, 'Nullable(Float64)') >= {p0:Float64}, JSONExtractArrayRaw(payload, {k1:String}))",
    );
    const c = q({ select: [{ path: "payload.symptoms", first: true, where: { field: "name", op: "eq", value: "pain" } }] });
    expect(c.params).toMatchObject({ k0: "name", p0: "pain", k1: "symptoms" });
  });

  it("reads element from each kept element, and accepts paths written from the payload root or as the array itself", () => {
    expect(array({ element: "code.system" })).toBe("arrayMap(el -> JSONExtractRaw(el, {k1:String}, {k2:String}), JSONExtractArrayRaw(payload, {k0:String}))");
    expect(array({ element: "payload.symptoms.name" })).toBe(array({ element: "name" }));
    // The array's own path is the element itself: an array of strings filtered by value.
    expect(array({ where: { field: "payload.symptoms", op: "ilike", value: "pa%" } })).toBe(
      "arrayFilter(el -> JSONExtract(el, 'Nullable(String)') ILIKE {p0:String}, JSONExtractArrayRaw(payload, {k0:String}))",
    );
  });

  it.each([
    ["eq", "pain", "JSONExtract(el, {k0:String}, 'Nullable(String)') = {p0:String}"],
    ["neq", true, "JSONExtract(el, {k0:String}, 'Nullable(Bool)') != {p0:Bool}"],
    ["lt", 3, "JSONExtract(el, {k0:String}, 'Nullable(Float64)') < {p0:Float64}"],
    ["in", ["a", "b"], "JSONExtract(el, {k0:String}, 'Nullable(String)') IN {p0:Array(String)}"],
    ["nin", [1, 2], "JSONExtract(el, {k0:String}, 'Nullable(Float64)') NOT IN {p0:Array(Float64)}"],
    ["like", "p%", "JSONExtract(el, {k0:String}, 'Nullable(String)') LIKE {p0:String}"],
    ["is", null, "JSONExtractRaw(el, {k0:String}) IN ('', 'null')"],
    ["exists", false, "NOT JSONHas(el, {k0:String})"],
    ["contains", 4, "has(JSONExtract(el, {k0:String}, 'Array(Nullable(Float64))'), {p0:Float64})"],
  ])("compiles where op %s on an element path", (op, value, sql) => {
    expect(array({ where: { field: "x", op, value } })).toBe(`arrayFilter(el -> ${sql}, JSONExtractArrayRaw(payload, {k1:String}))`);
  });

  it("nests or/and in where, and ANDs a list of nodes", () => {
    const or = array({ where: { or: [{ field: "score", op: "gt", value: 6 }, { and: [{ field: "name", op: "eq", value: "pain" }, { field: "grade", op: "exists", value: true }] }] } });
    expect(or).toContain("(JSONExtract(el, {k0:String}, 'Nullable(Float64)') > {p0:Float64}) OR ((JSONExtract(el, {k1:String}, 'Nullable(String)') = {p1:String}) AND (JSONHas(el, {k2:String})))");
    expect(array({ where: [{ field: "a", op: "eq", value: 1 }, { field: "b", op: "eq", value: 2 }] })).toContain(") AND (");
  });

  it("reaches an array through indexes and a path through the element's indexes, each bound 1-based", () => {
    const c = q({ select: [{ path: "payload.panels.0.results", first: true, element: "values.1" }] });
    expect(c.sql).toMatch(/^SELECT arrayElement\(arrayMap\(el -> JSONExtractRaw\(el, \{k3:String\}, \{k4:Int64\}\), JSONExtractArrayRaw\(payload, \{k0:String\}, \{k1:Int64\}, \{k2:String\}\)\), 1\) AS s0/);
    expect(c.params).toMatchObject({ k0: "panels", k1: 1, k2: "results", k3: "values", k4: 2 });
  });
});
