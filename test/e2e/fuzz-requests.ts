import fc from "fast-check";

/**
 * Requests for the fuzz test, built from the routes of GET /openapi.json: each route's
 * path parameters, query string and body from its schema (valid-ish), or made hostile
 * (odd strings, wrong kinds, deep nesting, huge lists, malformed JSON).
 */
export type Credential = "admin" | "patient" | "garbage" | "none";

export interface FuzzRequest {
  method: string;
  url: string;
  /** The route as the OpenAPI document names it (for grouping what failed). */
  route: string;
  credential: Credential;
  contentType?: string;
  accept?: string;
  body?: string;
}

export interface OpenApiOperation {
  parameters?: { in: string; name: string; schema?: Record<string, unknown> }[];
  requestBody?: { content?: Record<string, { schema?: Record<string, unknown> }> };
}

/** Strings that broke, or could break, a parser, a key space, a store or a log line. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\ud800", "a\udc00b", "\u0000", "nul\u0000in", "😀", "👩‍⚕️", "\r\n", "line\r\nbreak", "..", ".", "%00", "%", "../x", "", " ",
    "\u202e", "\ufeff", "'; DROP TABLE logs; --", "__proto__", "constructor", "1e400", "-0", "NaN", "null", "true",
    "2016-12-31T23:59:60Z", "2026-02-30", "0000-00-00T00:00:00Z", "9999-12-31T23:59:59Z", "2026-01-01", "a:b", "a.b", "*", ">",
  ),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.integer({ min: 200, max: 20_000 }).map((n) => "x".repeat(n)),
);

/** Percent sequences sent as they are: invalid UTF-8, an encoded lone surrogate, NUL, CR LF, dots. */
const rawPercent = fc.constantFrom("%", "%zz", "%ED%A0%80", "%00", "%0D%0A", "%2e%2e", "%2F", "%C0%AF", "%F0%9F%98%80");

/** encodeURIComponent, except that a lone surrogate is sent as the three bytes it would take. */
function encodePart(s: string): string {
  let out = "";
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)].map((b) => `%${b.toString(16).toUpperCase()}`).join("");
    } else out += encodeURIComponent(ch);
  }
  return out;
}

/** Times a parser may take or choke on: a leap second, days that do not exist, years out of range, too many digits. */
const timestampish = fc.oneof(
  {
    arbitrary: fc.constantFrom("2016-12-31T23:59:60Z", "2026-02-30T00:00:00Z", "2026-01-01T24:00:00Z", "+275760-09-13T00:00:00.000Z", "2026-01-01T00:00:00"),
    weight: 5,
  },
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

const resolveRef = (doc: Record<string, any>, ref: string) => ref.replace(/^#\//, "").split("/").reduce((o, k) => o?.[k], doc);

function stringFor(s: Record<string, any>): fc.Arbitrary<string> {
  if (s.format === "date-time") return fc.date({ min: new Date("1950-01-01"), max: new Date("2100-01-01"), noInvalidDate: true }).map((d) => d.toISOString());
  const maxLength = Math.min(s.maxLength ?? 24, 24);
  const minLength = Math.min(s.minLength ?? 0, maxLength);
  if (typeof s.pattern === "string") {
    try {
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= minLength && v.length <= (s.maxLength ?? Infinity));
    } catch {
      // A pattern fast-check cannot generate from (a lookahead): any string will do.
    }
  }
  return fc.string({ minLength, maxLength });
}

/** A value the JSON Schema `s` (OpenAPI 3.0 dialect) accepts, more or less. */
export function fromSchema(s: Record<string, any> | undefined, doc: Record<string, any>, fixtures: string[], depth = 0): fc.Arbitrary<unknown> {
  if (!s || depth > 6) return fc.constant(null);
  if (typeof s.$ref === "string") return fromSchema(resolveRef(doc, s.$ref), doc, fixtures, depth + 1);
  const alternatives = s.anyOf ?? s.oneOf;
  if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((a: Record<string, any>) => fromSchema(a, doc, fixtures, depth + 1)));
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if ("const" in s) return fc.constant(s.const);
  let base: fc.Arbitrary<unknown>;
  switch (s.type) {
    case "object": {
      const props: Record<string, Record<string, any>> = s.properties ?? {};
      const keys = Object.keys(props);
      base = keys.length === 0
        ? fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
        : fc.record(Object.fromEntries(keys.map((k) => [k, fromSchema(props[k], doc, fixtures, depth + 1)])), {
          requiredKeys: ((s.required ?? []) as string[]).filter((k) => k in props),
        });
      break;
    }
    case "array":
      base = fc.array(fromSchema(s.items, doc, fixtures, depth + 1), { minLength: Math.min(s.minItems ?? 0, 3), maxLength: Math.min(s.maxItems ?? 3, 3) });
      break;
    case "string":
      base = fc.oneof({ arbitrary: stringFor(s), weight: 3 }, { arbitrary: fc.constantFrom(...fixtures), weight: 1 }, { arbitrary: timestampish, weight: 1 });
      break;
    case "integer":
      base = fc.integer({ min: Math.max(s.minimum ?? -1000, -1e9), max: Math.min(s.maximum ?? 1000, 1e9) });
      break;
    case "number":
      base = fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
      break;
    case "boolean":
      base = fc.boolean();
      break;
    default:
      base = fc.jsonValue({ maxDepth: 2 });
  }
  return s.nullable === true ? fc.option(base, { nil: null, freq: 5 }) : base;
}

/** JSON text that is hostile as a whole value: deep, huge, or of the wrong kind. */
const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(129, 200, 6_000).map((n) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`),
  fc.constantFrom(129, 6_000).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
  fc.tuple(fc.constantFrom(5_000, 50_000, 120_000), fc.constantFrom("{}", "[]", "1", '"x"', "null", '{"a":"\\ud800"}')).map(([n, item]) => `[${Array(n).fill(item).join(",")}]`),
  oddString.map((s) => JSON.stringify(s)),
  fc.constantFrom("1e400", "-0", "9007199254740993", "true", "null", "{}", "[]", '"\\ud800"', '{"__proto__":{"x":1},"constructor":{"prototype":{}}}'),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
);

/** Text that is not JSON, or barely. */
const malformed = fc.constantFrom("{", '{"a":}', "[1,]", "\ufeff{}", "{'a':1}", "NaN", '{"a":1}{"b":2}', '{"a":"\ud800"}', "\u0000", "", " ");

const HOLE = JSON.stringify("\u0001hole\u0001");

/** A valid-ish value with one member (or the value itself) replaced by hostile text. */
function withHole(generated: unknown, pick: number): string {
  const value = structuredClone(generated);
  const holders: [Record<string | number, unknown>, string | number][] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || typeof x !== "object") continue;
    for (const [k, v] of Object.entries(x)) {
      holders.push([x as Record<string | number, unknown>, Array.isArray(x) ? Number(k) : k]);
      stack.push(v);
    }
  }
  if (holders.length === 0 || pick % (holders.length + 1) === holders.length) return HOLE;
  const [holder, key] = holders[pick % (holders.length + 1)]!;
  holder[key] = "\u0001hole\u0001";
  return JSON.stringify(value);
}

/** A body for a route that takes `schema`, as JSON text (or not). */
export function bodyFor(schema: Record<string, any> | undefined, doc: Record<string, any>, fixtures: string[]): fc.Arbitrary<string> {
  const valid = fromSchema(schema ?? {}, doc, fixtures);
  return fc.oneof(
    { arbitrary: valid.map((v) => JSON.stringify(v) ?? "null"), weight: 4 },
    { arbitrary: fc.tuple(valid, fc.nat(), hostileText).map(([v, pick, text]) => withHole(v, pick).replace(HOLE, () => text)), weight: 4 },
    { arbitrary: fc.tuple(valid, fc.nat(), oddString).map(([v, pick, s]) => withHole(v, pick).replace(HOLE, () => JSON.stringify(s))), weight: 2 },
    { arbitrary: hostileText, weight: 1 },
    { arbitrary: malformed, weight: 1 },
  );
}

/** JSON-RPC requests to /mcp, the tools' arguments valid-ish or hostile. */
export function mcpBody(tools: string[], fixtures: string[]): fc.Arbitrary<string> {
  const args = fc.oneof(
    fc.record({ patient_id: fc.constantFrom(...fixtures), limit: fc.integer({ min: -5, max: 500 }) }, { requiredKeys: [] }),
    fc.dictionary(fc.constantFrom("patient_id", "modules", "log_types", "since", "cursor", "view_type", "block_id", "format", "name", "date_of_birth", "identifier_value", "filter", "group_by", "aggregations"), fc.oneof(oddString, fc.jsonValue({ maxDepth: 2 }))),
  );
  const call = fc.record({
    jsonrpc: fc.constantFrom("2.0", "1.0"),
    id: fc.oneof(fc.nat(), oddString, fc.constant(null)),
    method: fc.constantFrom("tools/call", "tools/list", "initialize", "resources/list", "resources/read", "prompts/list", "prompts/get", "ping", "nope"),
    params: fc.record({ name: fc.oneof(fc.constantFrom(...tools), oddString), arguments: args, uri: fc.oneof(oddString, fc.constant("patient://x/stable")) }, { requiredKeys: [] }),
  }, { requiredKeys: ["jsonrpc", "method"] });
  return fc.oneof(
    { arbitrary: call.map((c) => JSON.stringify(c)), weight: 5 },
    { arbitrary: fc.tuple(call, fc.nat(), hostileText).map(([c, pick, text]) => withHole(c, pick).replace(HOLE, () => text)), weight: 3 },
    { arbitrary: fc.array(call, { maxLength: 3 }).map((c) => JSON.stringify(c)), weight: 1 },
    { arbitrary: malformed, weight: 1 },
  );
}

/** Requests to one route of the OpenAPI document. */
export function requestsFor(method: string, route: string, op: OpenApiOperation, doc: Record<string, any>, fixtures: string[], tools: string[]): fc.Arbitrary<FuzzRequest> {
  const params = op.parameters ?? [];
  const valueOf = ({ name, schema }: { name: string; schema?: Record<string, unknown> }) => fc.oneof(
    { arbitrary: fromSchema(schema, doc, fixtures).map((v) => (typeof v === "string" ? v : JSON.stringify(v) ?? "")).map(encodePart), weight: 3 },
    { arbitrary: oddString.map(encodePart), weight: 2 },
    { arbitrary: rawPercent, weight: 1 },
    // A parameter that names a time gets odd times most of all.
    { arbitrary: timestampish.map(encodePart), weight: /since|until|date|_at$/.test(name) ? 8 : 0 },
  );
  const pathValues = fc.tuple(...params.filter((p) => p.in === "path").map((p) => fc.oneof(
    { arbitrary: fc.constantFrom(...fixtures), weight: 3 },
    { arbitrary: valueOf(p), weight: 2 },
  )));
  const query = fc.array(fc.oneof(
    ...params.filter((p) => p.in === "query").map((p) => valueOf(p).map((v) => `${p.name}=${v}`)),
    oddString.map((s) => `${encodePart(s)}=${encodePart(s)}`),
  ), { maxLength: 5 });
  const json = op.requestBody?.content?.["application/json"]?.schema;
  const body = route === "/mcp" ? mcpBody(tools, fixtures) : json !== undefined ? bodyFor(json, doc, fixtures) : fc.oneof(fc.constant(undefined), bodyFor({}, doc, fixtures));
  return fc.record({
    path: pathValues,
    query,
    credential: fc.constantFrom<Credential>("admin", "admin", "admin", "patient", "garbage", "none"),
    contentType: fc.oneof({ arbitrary: fc.constant("application/json"), weight: 8 }, fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "application/json; charset=utf-16", "multipart/form-data; boundary=x")),
    accept: route === "/mcp" ? fc.constantFrom("application/json, text/event-stream", "application/json", "text/html") : fc.constant(undefined),
    body,
  }).map(({ path, query, credential, contentType, accept, body: text }) => {
    let i = 0;
    const url = route.replace(/\{[^}]+\}/g, () => path[i++] ?? "x");
    return {
      method, route, credential,
      url: query.length > 0 ? `${url}?${query.join("&")}` : url,
      ...(text === undefined ? {} : { body: text, contentType }),
      ...(accept === undefined ? {} : { accept }),
    };
  });
}

/** Values every parameter gets once, with the bootstrap credential, beside the random ones. */
const ODD_PARAMETERS = [
  "\ud800", "\u0000", "😀", "\r\n", "..", "", " ", "-1", "1e400", "x".repeat(300),
  "2016-12-31T23:59:60Z", "2026-02-30T00:00:00Z", "+275760-09-13T00:00:00.000Z",
].map(encodePart).concat(["%", "%ED%A0%80", "%00"]);

/** Each path and query parameter of a route set to each odd value in turn (the others to `fixture`). */
export function oddParameterRequests(method: string, route: string, op: OpenApiOperation, fixture: string): FuzzRequest[] {
  const params = (op.parameters ?? []).filter((p) => p.in === "path" || p.in === "query");
  return params.flatMap((param) => ODD_PARAMETERS.map((odd) => {
    const url = route.replace(/\{([^}]+)\}/g, (_, name: string) => (param.in === "path" && name === param.name ? odd : encodeURIComponent(fixture)));
    return { method, route, credential: "admin" as const, url: param.in === "query" ? `${url}?${param.name}=${odd}` : url };
  }));
}
