import { expect } from "vitest";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";

/**
 * What the hosted product's public Python SDK (olira 1.11, sync client) puts on the wire
 * and what its answer models accept, described in our own words from
 * ../shared/spec/olira-compat.md. Tests of the compatibility routes send requests exactly
 * as that client does and check each answer against the fields its models parse.
 */

/** A JSON type a parsed field must have. */
export type Kind = "string" | "int" | "number" | "bool" | "object" | "list" | "any";

/**
 * How the SDK's model treats one field:
 * - `req`: present and not null, of its kind (a missing or null value fails the parse);
 * - `def`: may be missing (the model has a default) but never null: a list, map, int or
 *   bool sent as null fails the parse;
 * - `opt`: may be missing or null.
 * `of` checks each element of a list (or each value of an object used as a map) against
 * a nested shape or kind; `shape` checks an object's own fields.
 */
export interface FieldRule {
  need: "req" | "def" | "opt";
  kind: Kind;
  of?: Shape | Kind;
  shape?: Shape;
  /** The values the SDK's enum accepts. */
  oneOf?: readonly string[];
}
export type Shape = Record<string, FieldRule>;

const rule = (need: FieldRule["need"]) => (kind: Kind, more: Omit<FieldRule, "need" | "kind"> = {}): FieldRule => ({ need, kind, ...more });
/** Present, not null. */
export const req = rule("req");
/** May be missing, never null. */
export const def = rule("def");
/** May be missing or null. */
export const opt = rule("opt");

/** The batch answer as the SDK's model reads it: accepted and failed counts, and located errors. */
export const BATCH_RESULT: Shape = {
  accepted: req("int"),
  failed: req("int"),
  errors: def("list", { of: { index: req("int"), code: req("string"), message: req("string") } }),
};

/**
 * A log entry as the SDK's log model reads it: GET /v1/state/{pid}/logs entries, and log
 * query rows through `as_logs()`. The trace must be an object (both parts optional) or null.
 */
export const SDK_LOG_ENTRY: Shape = {
  id: req("string"),
  type: opt("string"),
  timestamp: opt("string"),
  ingested_at: opt("string"),
  payload: def("object"),
  trace: opt("object", { shape: { object_type: opt("string"), object_id: opt("string") } }),
};

function kindOk(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case "string":
      return typeof v === "string";
    case "int":
      return Number.isInteger(v);
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "bool":
      return typeof v === "boolean";
    case "object":
      return typeof v === "object" && v !== null && !Array.isArray(v);
    case "list":
      return Array.isArray(v);
    case "any":
      return true;
  }
}

/** Every way `value` would fail the SDK's parse under `shape`, each with its path. */
export function sdkParseProblems(value: unknown, shape: Shape, path = "$"): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [`${path}: expected an object, got ${JSON.stringify(value)}`];
  const obj = value as Record<string, unknown>;
  const out: string[] = [];
  for (const [key, r] of Object.entries(shape)) {
    const at = `${path}.${key}`;
    const v = obj[key];
    if (v === undefined) {
      if (r.need === "req") out.push(`${at}: required, missing`);
      continue;
    }
    if (v === null) {
      if (r.need !== "opt") out.push(`${at}: null where the SDK needs a ${r.kind}`);
      continue;
    }
    if (!kindOk(r.kind, v)) {
      out.push(`${at}: expected ${r.kind}, got ${JSON.stringify(v)?.slice(0, 80)}`);
      continue;
    }
    if (r.oneOf && !r.oneOf.includes(v as string)) out.push(`${at}: ${JSON.stringify(v)} is not one of the SDK's values`);
    if (r.shape) out.push(...sdkParseProblems(v, r.shape, at));
    if (r.of) {
      const items = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
      for (const [k, x] of items) {
        if (typeof r.of === "string") {
          if (!kindOk(r.of, x)) out.push(`${at}[${k}]: expected ${r.of}, got ${JSON.stringify(x)?.slice(0, 80)}`);
        } else out.push(...sdkParseProblems(x, r.of, `${at}[${k}]`));
      }
    }
  }
  return out;
}

/** Fails the test with every field the SDK could not parse. */
export function expectSdkParses(value: unknown, shape: Shape): void {
  expect(sdkParseProblems(value, shape)).toEqual([]);
}

export interface SdkCall {
  /** Query parameters as the SDK passes them: lists comma-joined, booleans as "true"; undefined ones left out. */
  query?: Record<string, string | number | boolean | readonly string[] | undefined>;
  /** A JSON body; none is sent (and no Content-Type) when absent. */
  json?: unknown;
}

/** Query string the way the SDK's HTTP client writes it. */
function queryString(q: SdkCall["query"]): string {
  if (!q) return "";
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    p.append(k, Array.isArray(v) ? v.join(",") : typeof v === "boolean" ? (v ? "true" : "false") : String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : "";
}

/**
 * A client that talks as the SDK does: `Authorization: Bearer <key>` (an API key or a
 * patient token, never exchanged), `X-Olira-Project` when a project is configured, and
 * `Content-Type: application/json` only with a JSON body, serialized as Python's json
 * module writes it (", " and ": " separators, nulls kept).
 */
export function sdkClient(app: FastifyInstance, key: string, project?: string) {
  const call = (method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE", path: string, c: SdkCall = {}): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (project) headers["x-olira-project"] = project;
    let payload: string | undefined;
    if (c.json !== undefined) {
      headers["content-type"] = "application/json";
      payload = pythonJson(c.json);
    }
    return app.inject({ method, url: `${path}${queryString(c.query)}`, headers, ...(payload !== undefined ? { payload } : {}) });
  };
  return {
    get: (path: string, query?: SdkCall["query"]) => call("GET", path, { query }),
    post: (path: string, json?: unknown, query?: SdkCall["query"]) => call("POST", path, { json, query }),
    put: (path: string, json: unknown) => call("PUT", path, { json }),
    patch: (path: string, json: unknown) => call("PATCH", path, { json }),
    delete: (path: string, json?: unknown, query?: SdkCall["query"]) => call("DELETE", path, { json, query }),
  };
}
export type SdkClient = ReturnType<typeof sdkClient>;

/** JSON as Python's json.dumps writes it by default: a space after every ":" and ",". */
export function pythonJson(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(pythonJson).join(", ")}]`;
  const parts = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .map(([k, x]) => `${JSON.stringify(k)}: ${pythonJson(x)}`);
  return `{${parts.join(", ")}}`;
}

/** The SDK's error-handling rule (olira-compat §E): which exception a status becomes. */
export function sdkOutcome(status: number): "ok" | "auth" | "validation" | "conflict" | "retry" | "unexpected" {
  if (status >= 200 && status < 300) return "ok";
  if (status === 401 || status === 403) return "auth";
  if (status === 400 || status === 404 || status === 422) return "validation";
  if (status === 409) return "conflict";
  if (status === 408 || status === 429 || status >= 500) return "retry";
  return "unexpected";
}
