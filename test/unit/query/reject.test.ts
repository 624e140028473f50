import { describe, expect, it } from "vitest";
import { isAppError } from "../../../src/errors.js";
import { compileLogQuery, DEFAULT_LIMITS, QueryValidationError, type CompileScope } from "../../../query/index.js";

const org: CompileScope = { organization_id: "org_1", project_id: "prj_1" };

/** Compiles, expecting a 422 whose details locate a problem at `location` (and mention `text`). */
function rejects(body: unknown, location: (string | number)[], text?: string, scope: CompileScope = org) {
  let err: unknown;
  try {
    compileLogQuery(body, scope);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(QueryValidationError);
  const e = err as QueryValidationError;
  const hit = e.details.find((d) => JSON.stringify(d.location) === JSON.stringify(location));
  expect(hit, `no detail at ${JSON.stringify(location)}: ${JSON.stringify(e.details)}`).toBeDefined();
  if (text) expect(hit!.message).toContain(text);
  return { error: e, detail: hit! };
}
const where = (field: unknown, op: unknown = "eq", value: unknown = "x") => ({ filter: [{ field, op, value }] });

describe("compileLogQuery rejects", () => {
  it("a field outside the allowed roots, naming the field, as the query layer's own error (the service answers it 422)", () => {
    const { error, detail } = rejects(where("patient_id"), ["body", "filter", 0, "field"], '"patient_id"');
    expect(detail).toMatchObject({ type: "value_error", field: "filter.0.field", input_value: "patient_id" });
    expect(isAppError(error)).toBe(false);
    expect(error).toMatchObject({ name: "QueryValidationError", message: expect.stringContaining("filter.0.field") });
    rejects({ filter: [{ or: [{ field: "organization_id", op: "eq", value: "x" }] }] }, ["body", "filter", 0, "or", 0, "field"], "organization_id");
    rejects({ order: [{ field: "ingested_at" }] }, ["body", "order", 0, "field"]);
    rejects({ select: [{ path: "idempotency_key" }] }, ["body", "select", 0, "path"]);
    rejects({ group_by: ["id"] }, ["body", "group_by", 0]);
  });

  it("a sub-field of a column, and a filter or order on the whole payload", () => {
    rejects(where("type.name"), ["body", "filter", 0, "field"], "no sub-fields");
    rejects(where("payload"), ["body", "filter", 0, "field"], "needs a path");
    rejects({ order: [{ field: "payload" }] }, ["body", "order", 0, "field"]);
  });

  it.each(["payload.a-b", "payload.1a", "payload.", "payload..x", "payload.a b", "payload.01", "payload.x'); DROP", "payload.a`b", "payload.a`.`b", "payload.score`) OR 1=1 --", `payload.${"a".repeat(65)}`])(
    "the bad path segment in %s, naming the field",
    (field) => {
      const { detail } = rejects(where(field), ["body", "filter", 0, "field"], JSON.stringify(field));
      expect(detail.input_value).toBe(field);
      rejects({ group_by: [field] }, ["body", "group_by", 0], JSON.stringify(field));
      rejects({ aggregations: [{ op: "avg", field, alias: "a" }] }, ["body", "aggregations", 0, "field"], JSON.stringify(field));
    },
  );

  it("a path deeper than 8 segments", () => {
    rejects(where(`payload.${Array(9).fill("a").join(".")}`), ["body", "filter", 0, "field"], "too deep");
    expect(() => compileLogQuery(where(`payload.${Array(8).fill("a").join(".")}`), org)).not.toThrow();
  });

  it.each(["1x", "a-b", "", "x".repeat(65), "drop table"])("the bad alias %j", (alias) => {
    rejects({ select: [{ path: "type", alias }] }, ["body", "select", 0, "alias"]);
  });

  it("duplicate answer keys", () => {
    rejects({ select: [{ path: "type" }, { path: "trace", alias: "type" }] }, ["body", "select", 1, "alias"], "duplicate");
    rejects({ group_by: ["type"], aggregations: [{ op: "count", alias: "type" }] }, ["body", "aggregations", 0, "alias"], "duplicate");
  });

  it("groups nested deeper than maxDepth", () => {
    let node: unknown = { field: "type", op: "eq", value: "x" };
    for (let i = 0; i < DEFAULT_LIMITS.maxDepth; i++) node = { or: [node] };
    expect(() => compileLogQuery({ filter: [node] }, org)).not.toThrow();
    rejects({ filter: [{ and: [node] }] }, ["body", "filter", 0, "and", 0, "or", 0, "or", 0, "or", 0, "or", 0, "or"], "too costly");
  });

  it("more than maxConditions conditions, counted across groups", () => {
    const c = { field: "type", op: "eq", value: "x" };
    rejects({ filter: [c, { or: Array(DEFAULT_LIMITS.maxConditions).fill(c) }] }, ["body", "filter"], "more than 50 conditions");
  });

  it("a hostile list of 250,000 conditions within a group, stopping at the budget instead of walking it all", () => {
    const conditions = Array.from({ length: 250_000 }, (_, i) => ({ field: "payload.a", op: "eq", value: `v${i}` }));
    const body = { filter: [{ or: [{ and: conditions }] }] };
    const started = performance.now();
    expect(() => compileLogQuery(body, org)).toThrow(QueryValidationError);
    // Walking them all took 2.5 s; the budget is crossed after 51.
    expect(performance.now() - started).toBeLessThan(500);
    rejects(body, ["body", "filter"], "more than 50 conditions");
  });

  it("an array select on a path outside the payload, with a non-boolean first, or a bad element path", () => {
    rejects({ select: [{ path: "trace", first: true }] }, ["body", "select", 0, "path"], "payload path");
    rejects({ select: [{ path: "payload", first: true }] }, ["body", "select", 0, "path"], "payload path");
    rejects({ select: [{ path: "payload.a", first: "yes" }] }, ["body", "select", 0, "first"], "true");
    rejects({ select: [{ path: "payload.a", first: true, element: "a-b" }] }, ["body", "select", 0, "element"], "invalid segment");
    rejects({ select: [{ path: "payload.a", first: true, element: "" }] }, ["body", "select", 0, "element"], "inside each element");
  });

  it("an array select's where that is not a filter node, has an unknown op, or a value of the wrong kind", () => {
    const at = ["body", "select", 0, "where"];
    rejects({ select: [{ path: "payload.a", first: true, where: "score > 3" }] }, at, "condition");
    rejects({ select: [{ path: "payload.a", first: true, where: [] }] }, at, "non-empty");
    rejects({ select: [{ path: "payload.a", first: true, where: { field: "s", op: "regex", value: "x" } }] }, [...at, "op"], "must be one of");
    rejects({ select: [{ path: "payload.a", first: true, where: { or: [{ field: "s", op: "in", value: "x" }] } }] }, [...at, "or", 0, "value"], "non-empty array");
  });

  it("an array select beside group_by, or past the conditions budget it shares with filter", () => {
    rejects({ group_by: ["payload.a"], select: [{ path: "payload.a", first: true }], aggregations: [{ op: "count", alias: "n" }] }, ["body", "select", 0], "not with group_by");
    const c = { field: "type", op: "eq", value: "x" };
    const full = { filter: Array(DEFAULT_LIMITS.maxConditions).fill(c) };
    expect(() => compileLogQuery({ ...full, select: [{ path: "payload.a", first: true }] }, org)).not.toThrow();
    rejects({ ...full, select: [{ path: "payload.a", first: true, where: { field: "z", op: "eq", value: 1 } }] }, ["body", "select", 0, "where"], "more than 50 conditions");
  });

  it("an in-list or cohort over maxInList, and empty ones", () => {
    const big = Array.from({ length: DEFAULT_LIMITS.maxInList + 1 }, (_, i) => `v${i}`);
    rejects(where("type", "in", big), ["body", "filter", 0, "value"], "too costly");
    rejects(where("type", "nin", []), ["body", "filter", 0, "value"]);
    rejects({ patient_ids: big }, ["body", "patient_ids"], "too costly");
    rejects({ patient_ids: [] }, ["body", "patient_ids"]);
  });

  it("limit over max, limit below 1, fractional or deep offsets", () => {
    rejects({ limit: DEFAULT_LIMITS.maxLimit + 1 }, ["body", "limit"], "too costly");
    rejects({ limit: 0 }, ["body", "limit"]);
    rejects({ limit: "10" }, ["body", "limit"]);
    rejects({ offset: 1.5 }, ["body", "offset"]);
    rejects({ offset: 100_001 }, ["body", "offset"], "too costly");
  });

  it("typed with select, group_by or count", () => {
    rejects({ typed: true, select: [{ path: "type" }] }, ["body", "typed"]);
    rejects({ typed: true, group_by: ["type"] }, ["body", "typed"]);
    rejects({ typed: true, count: true }, ["body", "typed"]);
  });

  it("select with group_by on a field that is not a group key, and order on neither key nor alias", () => {
    rejects({ group_by: ["type"], select: [{ path: "trace" }] }, ["body", "select", 0, "path"], "group keys");
    rejects({ group_by: ["type"], order: [{ field: "timestamp" }] }, ["body", "order", 0, "field"]);
  });

  it("count mixed with rows-shaping options, and single with maybe_single", () => {
    rejects({ count: true, select: [{ path: "type" }] }, ["body", "count"], "select");
    rejects({ count: true, single: true }, ["body", "count"], "single");
    rejects({ single: true, maybe_single: true }, ["body", "maybe_single"]);
  });

  it("an unknown op, aggregation op, body key or condition key", () => {
    rejects(where("type", "regex"), ["body", "filter", 0, "op"], "must be one of");
    rejects({ aggregations: [{ op: "median", field: "payload.x", alias: "m" }] }, ["body", "aggregations", 0, "op"]);
    rejects({ where: [] }, ["body", "where"], "not an allowed field");
    rejects({ filter: [{ field: "type", op: "eq", value: "x", not: true }] }, ["body", "filter", 0, "not"]);
    rejects({ filter: [{ or: [], field: "type" }] }, ["body", "filter", 0, "field"]);
    rejects({ filter: [{ or: [] }] }, ["body", "filter", 0, "or"], "non-empty");
  });

  it.each([
    ["type", "eq", 5], ["type", "in", [1, 2]], ["type", "like", 3], ["type", "is", null], ["trace", "is", "maybe"], ["trace", "exists", true],
    ["timestamp", "gt", "yesterday"], ["timestamp", "gt", "2025-02-30"], ["timestamp", "gt", "2025-03-01T10:00:00"], ["timestamp", "like", "2025%"],
    ["payload.x", "eq", null], ["payload.x", "eq", { a: 1 }], ["payload.x", "gt", true], ["payload.x", "in", [1, "a"]], ["payload.x", "in", "a"],
    ["payload.x", "exists", "yes"], ["payload.x", "contains", null], ["payload.x", "is", false], ["payload.x", "like", 1],
  ])("a wrong value type: %s %s %j", (field, op, value) => {
    rejects(where(field, op, value), ["body", "filter", 0, "value"]);
  });

  it("a leap second on timestamp, saying so, as a log's own timestamp and every REST and MCP bound refuse it", () => {
    rejects(where("timestamp", "lte", "2026-11-01T23:59:60Z"), ["body", "filter", 0, "value"], "leap second");
    rejects(where("timestamp", "nin", ["2026-11-01T23:59:60.5+01:00"]), ["body", "filter", 0, "value"], "leap second");
  });

  it("a like or ilike pattern ending in a lone escape, which ClickHouse could not run", () => {
    rejects(where("trace", "ilike", "visit\\"), ["body", "filter", 0, "value"], "lone escape");
    rejects(where("payload.note", "like", "%a\\\\\\"), ["body", "filter", 0, "value"], "lone escape");
    // An escaped backslash at the end is a literal one.
    expect(() => compileLogQuery(where("payload.note", "like", "%a\\\\"), org)).not.toThrow();
    // Counted in one pass: a long run of backslashes costs no more than its length.
    const started = performance.now();
    rejects(where("trace", "like", `${"\\".repeat(200_001)}`), ["body", "filter", 0, "value"], "lone escape");
    compileLogQuery(where("trace", "like", `${"\\".repeat(200_000)}a`), org);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it("a missing value", () => {
    rejects({ filter: [{ field: "type", op: "eq" }] }, ["body", "filter", 0, "value"], "required");
  });

  it("aggregations with the wrong field", () => {
    rejects({ aggregations: [{ op: "count", field: "payload.x", alias: "n" }] }, ["body", "aggregations", 0, "field"], "no field");
    rejects({ aggregations: [{ op: "avg", alias: "n" }] }, ["body", "aggregations", 0, "field"]);
    rejects({ aggregations: [{ op: "sum", field: "type", alias: "n" }] }, ["body", "aggregations", 0, "field"], "numeric payload path");
  });

  it("patient_ids naming another patient on a patient-bound query", () => {
    const pat = { ...org, patient_id: "pat_1" };
    rejects({ patient_ids: ["pat_2"] }, ["body", "patient_ids"], "bound to one patient", pat);
    rejects({ patient_ids: ["pat_1", "pat_2"] }, ["body", "patient_ids"], undefined, pat);
  });

  it("a body that is not an object, listing every problem of a bad one at once", () => {
    rejects([], ["body"]);
    rejects(null, ["body"]);
    const { error } = rejects({ limit: -1, typed: "yes", filter: [{ field: "x", op: "eq", value: 1 }] }, ["body", "limit"]);
    expect(error.details.map((d) => d.field).sort()).toEqual(["filter.0.field", "limit", "typed"]);
  });
});
