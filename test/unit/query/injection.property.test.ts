import fc from "fast-check";
import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import { compileLogQuery, QueryBodySchema, QueryValidationError, type CompileLimits, type CompiledQuery } from "../../../query/index.js";

// Every user string carries a marker no emitted SQL contains: "§" for values and ids,
// "Qz" for path keys and aliases (which must look like identifiers to pass validation).
// Path keys are the one exception: a key-only path is read from the JSON column, so its
// keys appear as backquoted identifiers (`payload_json.`Qzk1`.`Qzk2``), and only there.
const nasty = fc.constantFrom("'; DROP TABLE logs; --", "\\", "\\'", '"', "`", "{p0:String}", "}", "%_", "\n\t\0", "é😀", "' OR 1=1 --", "$$");
const text = fc.oneof(fc.string({ unit: "binary", maxLength: 12 }), nasty, fc.tuple(fc.string({ maxLength: 4 }), nasty).map(([a, b]) => a + b));
const value = text.map((s) => `§v${s}`);
/** A LIKE pattern must not end in a lone escape (refused, see reject.test.ts): one more character ends it. */
const likePattern = (v: string) => `${v}%`;
const id = text.map((s) => `§p${s}`);
const key = fc.stringMatching(/^[A-Za-z0-9_]{0,20}$/).map((s) => `Qzk${s}`);
const alias = fc.stringMatching(/^[A-Za-z0-9_]{0,30}$/).map((s) => `Qza${s}`);
const path = fc.array(fc.oneof(key, key, fc.nat(999)), { minLength: 1, maxLength: 8 }).map((segs) => `payload.${segs.join(".")}`);
const iso = fc.date({ min: new Date("1970-01-02T00:00:00Z"), max: new Date("2200-01-01T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString());
const num = fc.double({ noNaN: true, noDefaultInfinity: true });
const list = <T>(a: fc.Arbitrary<T>) => fc.array(a, { minLength: 1, maxLength: 4 });
const cmp = fc.constantFrom("eq", "neq", "gt", "gte", "lt", "lte");

const textCond = fc.record({
  field: fc.constantFrom("type", "trace"),
  op: fc.constantFrom("eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "contains", "in", "nin"),
  value,
}).chain((c): fc.Arbitrary<{ field: string; op: string; value: unknown }> =>
  c.op === "in" || c.op === "nin" ? list(value).map((v) => ({ ...c, value: v })) : fc.constant(c.op === "like" || c.op === "ilike" ? { ...c, value: likePattern(c.value) } : c),
);
const traceIs = fc.record({ field: fc.constant("trace"), op: fc.constant("is"), value: fc.constantFrom(null, "not_null") });
const timeCond = fc.oneof(
  fc.record({ field: fc.constant("timestamp"), op: cmp, value: iso }),
  fc.record({ field: fc.constant("timestamp"), op: fc.constantFrom("in", "nin"), value: list(iso) }),
);
const condOn = (field: fc.Arbitrary<string>) => fc.oneof(
  fc.record({ field, op: cmp, value: fc.oneof(value, num) }),
  fc.record({ field, op: fc.constantFrom("eq", "neq"), value: fc.boolean() }),
  fc.record({ field, op: fc.constantFrom("in", "nin"), value: fc.oneof(list(value), list(num)) }),
  fc.record({ field, op: fc.constantFrom("like", "ilike"), value: value.map(likePattern) }),
  fc.record({ field, op: fc.constant("contains"), value: fc.oneof(value, num, fc.boolean()) }),
  fc.record({ field, op: fc.constant("is"), value: fc.constantFrom(null, "not_null") }),
  fc.record({ field, op: fc.constant("exists"), value: fc.boolean() }),
);
const payloadCond = condOn(path);
const leaf = fc.oneof(textCond, traceIs, timeCond, payloadCond);
/** Filter nodes over `leaves` with at most `groups` nested or/and levels (the default maxDepth is 5). */
const nodeAt = (groups: number, leaves: fc.Arbitrary<unknown> = leaf): fc.Arbitrary<unknown> => {
  if (groups === 0) return leaves;
  const inner = fc.array(nodeAt(groups - 1, leaves), { minLength: 1, maxLength: 3 });
  return fc.oneof({ arbitrary: leaves, weight: 3 }, { arbitrary: fc.record({ or: inner }), weight: 1 }, { arbitrary: fc.record({ and: inner }), weight: 1 });
};
const node = nodeAt(5);
const anyField = fc.oneof(fc.constantFrom("type", "trace", "timestamp"), path);
/** A path inside an array element, relative to it (keys and indexes). */
const inElement = fc.array(fc.oneof(key, key, fc.nat(999)), { minLength: 1, maxLength: 4 }).map((segs) => segs.join("."));
/** Array selects: where nodes over element paths, an element path, first or the list. */
const arraySelect = (a: string) => fc.record({
  path, first: fc.boolean(), alias: fc.constant(a), where: nodeAt(2, condOn(inElement)), element: inElement,
}, { requiredKeys: ["path", "first", "alias"] });

const common = { patient_ids: fc.uniqueArray(id, { minLength: 1, maxLength: 5 }), filter: fc.array(node, { maxLength: 4 }), limit: fc.integer({ min: 1, max: 1000 }), offset: fc.integer({ min: 0, max: 100_000 }), include_total: fc.boolean() };
const rowsBody = fc.record({
  ...common,
  select: fc.uniqueArray(alias, { minLength: 1, maxLength: 4 }).chain((as) => fc.tuple(...as.map((a) => fc.oneof(anyField.map((p) => ({ path: p, alias: a })), arraySelect(a))))),
  order: fc.array(fc.record({ field: anyField, desc: fc.boolean() }, { requiredKeys: ["field"] }), { minLength: 1, maxLength: 3 }),
  single: fc.boolean(),
  typed: fc.boolean(),
}, { requiredKeys: [] });
const countBody = fc.record({ ...common, count: fc.constant(true) }, { requiredKeys: ["count"] });
const aggregation = (a: string) => fc.oneof(
  fc.constant({ op: "count", alias: a }),
  fc.record({ op: fc.constantFrom("sum", "avg", "min", "max"), field: path, alias: fc.constant(a) }),
  fc.record({ op: fc.constantFrom("min", "max"), field: fc.constant("timestamp"), alias: fc.constant(a) }),
);
const groupBody = fc.record({
  ...common,
  keys: fc.uniqueArray(anyField, { minLength: 1, maxLength: 3 }),
  aliases: fc.uniqueArray(alias, { minLength: 2, maxLength: 5 }),
}, { requiredKeys: ["keys", "aliases"] }).chain(({ keys, aliases, ...rest }) => fc.record({
  aggregations: fc.tuple(...aliases.slice(1).map(aggregation)),
  order: fc.constantFrom(...keys, ...aliases.slice(1)).map((f) => [{ field: f, desc: true }]),
}).map((extra) => ({ ...rest, ...extra, group_by: keys, select: [{ path: keys[0], alias: aliases[0] }] })));

const limits: CompileLimits = { maxLimit: 1000, defaultLimit: 100, maxInList: 1000, maxDepth: 5, maxConditions: 10_000 };
const scope = fc.record({ organization_id: id, project_id: id, patient_id: fc.option(id, { nil: undefined }) }, { requiredKeys: ["organization_id", "project_id"] });

/** Every string (and number) a body or scope carries, with the path keys split out. */
function userStrings(body: unknown, out: Set<string> = new Set()): Set<string> {
  if (typeof body === "string") {
    // A path inside an array element is its segments (Qzk keys and indexes), never used whole.
    if (body.startsWith("Qzk") && body.includes(".")) body.split(".").forEach((seg) => out.add(seg));
    else out.add(body);
    if (body.startsWith("payload.")) for (const seg of body.split(".").slice(1)) out.add(seg);
  } else if (typeof body === "number") out.add(String(body));
  else if (Array.isArray(body)) body.forEach((x) => userStrings(x, out));
  else if (body && typeof body === "object") Object.values(body).forEach((x) => userStrings(x, out));
  return out;
}
const placeholders = (sql: string) => [...sql.matchAll(/\{(\w+):([^{}]+)\}/g)].map((m) => m[1]!);
/** The compiler's strict key pattern: the only text a body can get into SQL, as an identifier. */
const KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** A JSON column path as the compiler writes it: backquoted keys after payload_json. */
const JSON_PATH = /payload_json(?:\.`[A-Za-z_][A-Za-z0-9_]{0,63}`)+/g;

/** Path keys the body wrote (segments of payload.… strings that are not indexes). */
function pathKeys(body: unknown): Set<string> {
  const keys = new Set<string>();
  for (const u of userStrings(body)) if (u.startsWith("payload.")) for (const seg of u.split(".").slice(1)) if (!/^\d+$/.test(seg)) keys.add(seg);
  return keys;
}

function checkNoUserText(c: CompiledQuery, body: Record<string, unknown>, s: Record<string, unknown>) {
  const keys = pathKeys(body);
  for (const whole of [c.sql, c.countSql ?? ""]) {
    // Backquotes only ever open a JSON column path, and each quoted name is a key of the body's paths.
    for (const m of whole.matchAll(/`([^`]*)`/g)) {
      expect(m[1]).toMatch(KEY);
      expect(keys.has(m[1]!), `${m[1]} is not a path key of the body`).toBe(true);
    }
    const sql = whole.replace(JSON_PATH, "payload_json.<path>");
    expect(sql).not.toContain("`");
    expect(sql).not.toContain("§");
    expect(sql).not.toContain("Qz");
    // Markers cover strings; timestamps and numbers (limit, offset, values) must not be spliced either.
    // Ops, roots and aggregation names are the fixed vocabulary and may appear.
    for (const u of userStrings([body, s])) {
      if (/^\d{4}-\d{2}-\d{2}T/.test(u) || (u.length >= 3 && /^[-+\d.e]+$/.test(u))) expect(sql.includes(u), `${JSON.stringify(u)} in ${sql}`).toBe(false);
    }
  }
  expect(placeholders(c.sql).every((n) => n in c.params)).toBe(true);
  if (c.countSql) expect(placeholders(c.countSql).every((n) => n in c.countParams!)).toBe(true);
}

describe("compileLogQuery never writes user text into SQL", () => {
  it("binds every value and id, writes path keys only as checked identifiers, keeps aliases in the shape only", () => {
    fc.assert(
      fc.property(fc.oneof(rowsBody, countBody, groupBody), scope, (body: Record<string, unknown>, s) => {
        if (s.patient_id !== undefined) delete body.patient_ids;
        if (body.select !== undefined) delete body.typed;
        // The route's schema refuses these patient_ids (an id is letters, digits, _ and -);
        // the compiler must bind them all the same.
        const { patient_ids: _hostileIds, ...rest } = body;
        expect(Value.Check(QueryBodySchema, rest)).toBe(true);
        const c = compileLogQuery(body, s, limits);
        checkNoUserText(c, body, s);
        // Values and ids arrive through params; a path key as its own parameter or as an identifier.
        const bound = new Set(Object.values(c.params).flatMap((v) => (Array.isArray(v) ? v : [v])).map(String));
        const idents = new Set([c.sql, c.countSql ?? ""].flatMap((sql) => [...sql.matchAll(/`([^`]*)`/g)].map((m) => m[1]!)));
        const arrays = ((body.select ?? []) as Record<string, unknown>[]).map((x) => [x.where, x.element]);
        for (const u of userStrings([body.filter, body.patient_ids, s, arrays])) {
          if (u.startsWith("§")) expect(bound.has(u), `${JSON.stringify(u)} not bound`).toBe(true);
          if (u.startsWith("Qzk")) expect(bound.has(u) || idents.has(u), `${JSON.stringify(u)} neither bound nor an identifier`).toBe(true);
        }
        const keys = [...(c.shape.select ?? []).map((x) => x.key), ...(c.shape.aggregations ?? []).map((x) => x.alias)];
        for (const a of userStrings([body.select, body.aggregations])) if (a.startsWith("Qza")) expect(keys).toContain(a);
      }),
      { numRuns: 400 },
    );
  });

  it("refuses a payload path with any segment outside the strict pattern, naming the field", () => {
    const bad = fc.oneof(text, fc.string({ maxLength: 70 })).filter((seg) => !KEY.test(seg) && !/^(0|[1-9][0-9]{0,5})$/.test(seg) && !seg.includes("."));
    const field = fc.tuple(fc.array(key, { maxLength: 3 }), bad, fc.array(key, { maxLength: 3 })).map(([a, b, c]) => ["payload", ...a, b, ...c].join("."));
    const use = fc.constantFrom("filter", "select", "order", "group_by", "aggregation");
    fc.assert(
      fc.property(field, use, (f, where) => {
        const body = {
          filter: { filter: [{ field: f, op: "gt", value: 1 }] },
          select: { select: [{ path: f }] },
          order: { order: [{ field: f }] },
          group_by: { group_by: [f] },
          aggregation: { aggregations: [{ op: "avg", field: f, alias: "a" }] },
        }[where];
        let err: unknown;
        try {
          compileLogQuery(body, { organization_id: "o", project_id: "p" }, limits);
        } catch (e) {
          err = e;
        }
        expect(err).toBeInstanceOf(QueryValidationError);
        const details = (err as QueryValidationError).details;
        expect(details.some((d) => d.input_value === f && d.message.includes("invalid segment")), JSON.stringify(details)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("answers any other JSON with a compiled query or a QueryValidationError, nothing else", () => {
    const junk = fc.record({
      patient_ids: fc.jsonValue(), filter: fc.oneof(fc.jsonValue(), fc.array(fc.oneof(node, fc.jsonValue()))), select: fc.jsonValue(), order: fc.jsonValue(),
      limit: fc.jsonValue(), offset: fc.jsonValue(), group_by: fc.jsonValue(), aggregations: fc.jsonValue(), count: fc.jsonValue(), typed: fc.jsonValue(),
    }, { requiredKeys: [] });
    fc.assert(
      fc.property(fc.oneof(junk, fc.jsonValue()), scope, (body, s) => {
        try {
          const c = compileLogQuery(body, s, limits);
          checkNoUserText(c, body as Record<string, unknown>, s);
        } catch (e) {
          expect(e).toBeInstanceOf(QueryValidationError);
          expect((e as QueryValidationError).details.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
  });
});
