import { describe, expect, it } from "vitest";
import { compileLogQuery, type CompiledQuery } from "../../../query/index.js";

const org = { organization_id: "org_1", project_id: "prj_1" };
const q = (body: Record<string, unknown>, scope: Parameters<typeof compileLogQuery>[1] = org) => compileLogQuery(body, scope);
/** The filter part of the WHERE clause, after the scope conditions. */
const filterOf = (c: CompiledQuery) => c.sql.split("\n").find((l) => l.startsWith("WHERE "))!.replace(/^WHERE organization_id = \{org:String\} AND project_id = \{project:String\}( AND )?/, "");
const cond = (field: string, op: string, value: unknown) => q({ filter: [{ field, op, value }] });
/** The numeric read of a key-only payload path from the JSON column, as the compiler writes it. */
const num = (col: string) => `coalesce(toFloat64(${col}.:Int64), ${col}.:Float64, toFloat64(${col}.:UInt64), toFloat64OrNull(${col}.:String), toFloat64(${col}.:Bool))`;

describe("compileLogQuery: filter ops", () => {
  it.each([
    ["eq", "=", "symptom_report"], ["neq", "!=", "x"], ["gt", ">", "m"], ["gte", ">=", "m"], ["lt", "<", "m"], ["lte", "<=", "m"],
  ])("compares type with %s as a bound String", (op, sqlOp, value) => {
    const c = cond("type", op, value);
    expect(filterOf(c)).toBe(`(type ${sqlOp} {p0:String})`);
    expect(c.params.p0).toBe(value);
  });

  it("reads a payload number from the JSON column, the path keys as backquoted identifiers and the value bound", () => {
    const c = cond("payload.score", "gt", 5);
    expect(filterOf(c)).toBe(`(${num("payload_json.`score`")} > {p0:Float64})`);
    expect(c.params).toEqual({ org: "org_1", project: "prj_1", p0: 5, limit: 101, offset: 0 });
    expect(filterOf(cond("payload.vitals.heart_rate", "lte", 90))).toBe(`(${num("payload_json.`vitals`.`heart_rate`")} <= {p0:Float64})`);
  });

  it("binds an integer beyond 2^53 as its decimal text, which chdb's binder accepts", () => {
    expect(cond("payload.x", "gt", 1e21).params.p0).toBe("1e+21");
    expect(cond("payload.x", "in", [1e21, 5]).params.p0).toBe("[1e+21,5]");
    expect(cond("payload.x", "in", [1.5, 5]).params.p0).toEqual([1.5, 5]);
  });

  it("reads a payload string as String and a boolean as Bool, chosen by the value's JS type", () => {
    expect(filterOf(cond("payload.name", "eq", "pain"))).toBe("(JSONExtract(payload, {k0:String}, 'Nullable(String)') = {p0:String})");
    expect(filterOf(cond("payload.done", "neq", true))).toBe("(JSONExtract(payload, {k0:String}, 'Nullable(Bool)') != {p0:Bool})");
  });

  it("reads a path through an array index from the text, every segment bound, 0-based index as ClickHouse's 1-based Int64", () => {
    const c = cond("payload.symptoms.0.score", "gte", 3);
    expect(filterOf(c)).toBe("(JSONExtract(payload, {k0:String}, {k1:Int64}, {k2:String}, 'Nullable(Float64)') >= {p0:Float64})");
    expect(c.params).toMatchObject({ k0: "symptoms", k1: 1, k2: "score" });
  });

  it("binds timestamps as epoch milliseconds compared as DateTime64", () => {
    const c = cond("timestamp", "lt", "2025-03-01T10:00:00+01:00");
    expect(filterOf(c)).toBe("(timestamp < fromUnixTimestamp64Milli({p0:Int64}, 'UTC'))");
    expect(c.params.p0).toBe(Date.UTC(2025, 2, 1, 9));
    expect(cond("timestamp", "in", ["2025-03-01", "2025-03-02T00:00:00.5Z"]).params.p0).toEqual([Date.UTC(2025, 2, 1), Date.UTC(2025, 2, 2, 0, 0, 0, 500)]);
  });

  it("binds in and nin lists as typed arrays", () => {
    expect(filterOf(cond("type", "in", ["a", "b"]))).toBe("(type IN {p0:Array(String)})");
    const c = cond("payload.score", "nin", [1, 2]);
    expect(filterOf(c)).toBe(`(${num("payload_json.`score`")} NOT IN {p0:Array(Float64)})`);
    expect(filterOf(cond("payload.name", "in", ["a"]))).toBe("(JSONExtract(payload, {k0:String}, 'Nullable(String)') IN {p0:Array(String)})");
    expect(c.params.p0).toEqual([1, 2]);
    expect(filterOf(cond("timestamp", "nin", ["2025-03-01"]))).toBe("(toUnixTimestamp64Milli(timestamp) NOT IN {p0:Array(Int64)})");
  });

  it("binds like and ilike patterns", () => {
    expect(filterOf(cond("trace", "ilike", "visit-%"))).toBe("(trace ILIKE {p0:String})");
    expect(filterOf(cond("payload.note", "like", "%cough%"))).toBe("(JSONExtract(payload, {k0:String}, 'Nullable(String)') LIKE {p0:String})");
  });

  it("treats a missing path and JSON null alike for is, and tests presence for exists", () => {
    expect(filterOf(cond("payload.x", "is", null))).toBe("(JSONExtractRaw(payload, {k0:String}) IN ('', 'null'))");
    expect(filterOf(cond("payload.x", "is", "not_null"))).toBe("(JSONExtractRaw(payload, {k0:String}) NOT IN ('', 'null'))");
    expect(filterOf(cond("trace", "is", null))).toBe("(trace = '')");
    expect(filterOf(cond("payload.x", "exists", true))).toBe("(JSONHas(payload, {k0:String}))");
    expect(filterOf(cond("payload.x", "exists", false))).toBe("(NOT JSONHas(payload, {k0:String}))");
  });

  it("reads contains as array membership, or substring when the path holds a string", () => {
    expect(filterOf(cond("payload.tags", "contains", "a"))).toBe(
      "(if(JSONType(payload, {k0:String}) = 'Array', has(JSONExtract(payload, {k0:String}, 'Array(Nullable(String))'), {p0:String}), JSONType(payload, {k0:String}) = 'String' AND position(JSONExtractString(payload, {k0:String}), {p0:String}) > 0))",
    );
    expect(filterOf(cond("payload.codes", "contains", 7))).toBe("(has(JSONExtract(payload, {k0:String}, 'Array(Nullable(Float64))'), {p0:Float64}))");
    expect(filterOf(cond("trace", "contains", "visit"))).toBe("(position(trace, {p0:String}) > 0)");
  });
});

describe("compileLogQuery: nesting", () => {
  it("ANDs top-level items and nests or/and groups in parentheses", () => {
    const c = q({
      filter: [
        { field: "type", op: "eq", value: "symptom_report" },
        { or: [{ field: "payload.score", op: "gt", value: 5 }, { and: [{ field: "trace", op: "ilike", value: "visit-%" }, { field: "payload.x", op: "exists", value: true }] }] },
      ],
    });
    expect(filterOf(c)).toBe(
      `((type = {p0:String}) AND ((${num("payload_json.`score`")} > {p1:Float64}) OR ((trace ILIKE {p2:String}) AND (JSONHas(payload, {k0:String})))))`,
    );
  });

  it("reads a legacy type name as its canonical type, since logs are stored under that one", () => {
    expect(q({ filter: [{ field: "type", op: "eq", value: "symptom_reported" }] }).params.p0).toBe("symptom_report");
    expect(q({ filter: [{ field: "type", op: "nin", value: ["condition_updated", "user_login"] }] }).params.p0).toEqual(["condition", "user_login"]);
    expect(q({ filter: [{ field: "trace", op: "eq", value: "symptom_reported" }] }).params.p0).toBe("symptom_reported");
  });

  it("reuses the key parameters of a path used twice", () => {
    const c = q({ filter: [{ field: "payload.a.b", op: "eq", value: "x" }, { field: "payload.a.b", op: "like", value: "y%" }] });
    expect(Object.keys(c.params).filter((k) => k.startsWith("k"))).toEqual(["k0", "k1"]);
  });
});

describe("compileLogQuery: scope", () => {
  it("always puts organization and project in the WHERE clause as parameters", () => {
    const c = q({});
    expect(c.sql).toBe("SELECT id, type, timestamp, ingested_at, trace, trace_type, payload, patient_id AS audit_patient_id\nFROM logs FINAL\nWHERE organization_id = {org:String} AND project_id = {project:String}\nORDER BY timestamp DESC, id DESC\nLIMIT {limit:UInt32} OFFSET {offset:UInt32}");
    expect(c.params).toEqual({ org: "org_1", project: "prj_1", limit: 101, offset: 0 });
  });

  it("adds the scope's patient, and accepts patient_ids that only repeat it", () => {
    const c = q({ patient_ids: ["pat_9"] }, { ...org, patient_id: "pat_9" });
    expect(c.sql).toContain("AND patient_id = {patient:String}");
    expect(c.params.patient).toBe("pat_9");
  });

  it("turns patient_ids into a cohort on the organization route", () => {
    const c = q({ patient_ids: ["a", "b", "a"], count: true });
    expect(c.sql).toContain("AND patient_id IN {patients:Array(String)}");
    expect(c.params.patients).toEqual(["a", "b"]);
  });

  it("keeps the scope in the count query too", () => {
    const c = q({ include_total: true, filter: [{ field: "type", op: "eq", value: "x" }] }, { ...org, patient_id: "p" });
    expect(c.countSql).toBe("SELECT count() AS n\nFROM logs FINAL\nWHERE organization_id = {org:String} AND project_id = {project:String} AND patient_id = {patient:String} AND (type = {p0:String})");
    expect(c.countParams).toEqual({ org: "org_1", project: "prj_1", patient: "p", p0: "x" });
  });
});

describe("compileLogQuery: answer shapes", () => {
  it("projects selected paths under positional columns and keeps alias-or-path keys in the shape", () => {
    const c = q({ select: [{ path: "timestamp" }, { path: "payload.score", alias: "score" }, { path: "payload" }] });
    expect(c.sql).toMatch(/^SELECT timestamp AS s0, JSONExtractRaw\(payload, \{k0:String\}\) AS s1, payload AS s2, patient_id AS audit_patient_id\n/);
    expect(c.shape.select).toEqual([{ key: "timestamp", path: "timestamp" }, { key: "score", path: "payload.score" }, { key: "payload", path: "payload" }]);
  });

  it("compiles count to a bare count() with no rows, limit or order", () => {
    const c = q({ count: true, filter: [{ field: "type", op: "eq", value: "x" }] });
    expect(c.kind).toBe("count");
    expect(c.sql).toBe("SELECT count() AS n\nFROM logs FINAL\nWHERE organization_id = {org:String} AND project_id = {project:String} AND (type = {p0:String})");
    expect(c.params).not.toHaveProperty("limit");
  });

  it("adds a count query for include_total and none otherwise", () => {
    expect(q({}).countSql).toBeUndefined();
    expect(q({ include_total: true }).countSql).toBe("SELECT count() AS n\nFROM logs FINAL\nWHERE organization_id = {org:String} AND project_id = {project:String}");
  });

  it.each(["count", "sum", "avg", "min", "max"] as const)("groups with the %s aggregation", (op) => {
    const agg = op === "count" ? { op, alias: "v" } : { op, field: "payload.score", alias: "v" };
    const c = q({ group_by: ["type"], aggregations: [agg] });
    const n = num("payload_json.`score`");
    // min and max: the numbers' extreme when there are numbers, else the strings' (as JSON text).
    const text = "JSONExtract(payload, {k0:String}, 'Nullable(String)')";
    const expr = op === "count" ? "count()" : op === "min" || op === "max" ? `if(count(${n}) > 0, toJSONString(${op}(${n})), toJSONString(${op}OrNull(${text})))` : `${op}(${n})`;
    expect(c.kind).toBe("group");
    expect(c.sql).toBe(`SELECT type AS g0, ${expr} AS a0, arraySlice(groupUniqArray(patient_id) AS audit_all, 1, {audit_max:UInt32}) AS audit_patient_ids, length(audit_all) AS audit_patient_count\nFROM logs FINAL\nWHERE organization_id = {org:String} AND project_id = {project:String}\nGROUP BY g0\nORDER BY g0 ASC\nLIMIT {limit:UInt32} OFFSET {offset:UInt32}`);
    expect(c.shape).toEqual({ groupKeys: ["type"], aggregations: [op === "count" ? { alias: "v", op } : { alias: "v", op, field: "payload.score" }] });
  });

  it("groups by a payload path as raw JSON, orders by an aggregation alias, and counts groups for include_total", () => {
    const c = q({ group_by: ["payload.severity", "type"], aggregations: [{ op: "count", alias: "n" }, { op: "max", field: "timestamp", alias: "last" }], order: [{ field: "n", desc: true }], include_total: true });
    const key = "if(dynamicType(payload_json.`severity`) IN ('Int64', 'UInt64', 'Float64', 'Bool'), toJSONString(payload_json.`severity`), JSONExtractRaw(payload, {k0:String}))";
    expect(c.sql).toContain(`SELECT ${key} AS g0, type AS g1, count() AS a0, maxOrNull(timestamp) AS a1`);
    expect(c.sql).toContain("GROUP BY g0, g1\nORDER BY a0 DESC NULLS LAST, g0 ASC, g1 ASC");
    expect(c.countSql).toBe(`SELECT count() AS n FROM (SELECT ${key} AS g0, type AS g1\nFROM logs FINAL\nWHERE organization_id = {org:String} AND project_id = {project:String}\nGROUP BY g0, g1)`);
    expect(c.countParams).toEqual({ org: "org_1", project: "prj_1", k0: "severity" });
  });

  it("aggregates without group_by into one row", () => {
    const c = q({ aggregations: [{ op: "avg", field: "payload.score", alias: "avg_score" }], include_total: true });
    expect(c.sql).not.toContain("GROUP BY");
    expect(c.countSql).toBe("SELECT 1 AS n");
  });

  it("lets select name group keys, under an alias", () => {
    const c = q({ group_by: ["type", "payload.flag"], select: [{ path: "payload.flag", alias: "flag" }], aggregations: [{ op: "count", alias: "n" }] });
    expect(c.shape.select).toEqual([{ key: "flag", path: "payload.flag" }]);
  });
});

describe("compileLogQuery: paging and flags", () => {
  it("fetches one row beyond the limit so the caller can tell has_more", () => {
    const c = q({ limit: 10, offset: 20 });
    expect([c.limit, c.offset, c.params.limit, c.params.offset]).toEqual([10, 20, 11, 20]);
    expect(q({}).limit).toBe(100);
  });

  it.each(["single", "maybe_single"])("limits %s to two rows so a second row is visible", (flag) => {
    const c = q({ [flag]: true, limit: 50 });
    expect(c.limit).toBe(2);
    expect(c.single).toBe(flag === "single");
    expect(c.maybeSingle).toBe(flag === "maybe_single");
  });

  it("passes typed through for whole-row queries", () => {
    expect(q({ typed: true }).typed).toBe(true);
    expect(q({}).typed).toBe(false);
  });

  it("orders by the given fields, payload paths numerically then as text, with id as the tiebreaker", () => {
    expect(q({ order: [{ field: "type" }, { field: "timestamp", desc: true }] }).sql).toContain("ORDER BY type ASC, timestamp DESC, id DESC");
    expect(q({ order: [{ field: "payload.score" }] }).sql).toContain(
      `ORDER BY ${num("payload_json.`score`")} ASC NULLS LAST, if(isNull(${num("payload_json.`score`")}) AND JSONType(payload, {k0:String}) = 'String', JSONExtractString(payload, {k0:String}), NULL) ASC NULLS LAST, id ASC`,
    );
    expect(q({ order: [{ field: "payload.items.0.n", desc: true }] }).sql).toContain(
      "ORDER BY JSONExtract(payload, {k0:String}, {k1:Int64}, {k2:String}, 'Nullable(Float64)') DESC NULLS LAST, if(isNull(JSONExtract(payload, {k0:String}, {k1:Int64}, {k2:String}, 'Nullable(Float64)')) AND JSONType(payload, {k0:String}, {k1:Int64}, {k2:String}) = 'String', JSONExtractString(payload, {k0:String}, {k1:Int64}, {k2:String}), NULL) DESC NULLS LAST, id DESC",
    );
  });
});
