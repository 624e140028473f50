import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { oddParameterRequests, requestsFor, type Credential, type FuzzRequest, type OpenApiOperation } from "./fuzz-requests.js";

/**
 * Seeded fuzzing of every route of GET /openapi.json (issue 25): a few thousand requests,
 * valid-ish and hostile, with the bootstrap credential, a patient token, a garbage one and
 * none, and each path and query parameter set to each odd value once. Whatever they hold, no answer may be a 5xx, every 4xx carries the spec's error body
 * (on /mcp a JSON-RPC error object may stand in for it), and none may take over 2 s.
 */
const SEED = 25;
const PER_ROUTE = 60;
const MAX_MS = 2_000;
const TOOLS = [
  "get_stable_data", "list_event_state_modules", "get_event_state_module", "list_views_and_blocks", "get_view",
  "get_view_block", "get_view_recent_events", "get_logs", "get_events", "find_patient", "query_logs",
];

let t: TestStack;
let credentials: Record<Credential, string | undefined>;
let fixtures: string[];

beforeAll(async () => {
  t = await startStack();
  const admin = t.auth;
  const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: admin, payload: { external_identifiers: [{ system: "mrn", value: "fuzz-1" }] } })).json().id;
  const token = (await t.app.inject({ method: "POST", url: "/v1/auth/token", headers: admin, payload: { patient_id: pid } })).json().access_token;
  const key = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: admin, payload: { name: "fuzz", scopes: ["sdk:state-read"] } })).json().id;
  const upload = (await t.app.inject({ method: "POST", url: "/v1/ingestion/upload-url", headers: admin })).json().upload_url as string;
  fixtures = [pid, "default", key, upload.split("/").pop()!, "symptom_report", "symptoms", "active_symptoms", "clinical_summary", "mrn", "fuzz-1"];
  credentials = { admin: admin.authorization, patient: `Bearer ${token}`, garbage: "Bearer not-a-credential", none: undefined };
});
afterAll(async () => {
  await t?.close();
});

/** What is wrong with an answer, if anything. */
function problemOf(req: FuzzRequest, status: number, text: string, ms: number): string | undefined {
  if (ms > MAX_MS) return `took ${Math.round(ms)} ms`;
  if (status >= 500) return `answered ${status}`;
  if (status < 400) return undefined;
  let body: Record<string, any>;
  try {
    body = JSON.parse(text);
  } catch {
    return `answered ${status} with a body that is not JSON`;
  }
  if (req.route === "/mcp" && body?.jsonrpc === "2.0" && typeof body.error?.code === "number" && typeof body.error?.message === "string") return undefined;
  const spec = body?.error === true && body.status_code === status && typeof body.error_type === "string" && typeof body.message === "string"
    && Array.isArray(body.details) && body.details.every((d: any) => typeof d?.type === "string" && typeof d?.message === "string")
    && typeof body.timestamp === "string" && !Number.isNaN(Date.parse(body.timestamp));
  return spec ? undefined : `answered ${status} without the spec's error body`;
}

describe("fuzzing every route of the OpenAPI document", () => {
  it("never answers 5xx, always answers a 4xx with the spec's error body, and never takes over 2 s", async () => {
    const doc = (await t.app.inject({ url: "/openapi.json", headers: t.auth })).json();
    const routes = Object.entries<Record<string, OpenApiOperation>>(doc.paths).flatMap(([route, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), route, op })));
    expect(routes.length).toBeGreaterThan(50);

    const found = new Map<string, { count: number; example: string }>();
    let sent = 0;
    for (const [i, { method, route, op }] of routes.entries()) {
      const requests = [
        ...fc.sample(requestsFor(method, route, op, doc, fixtures, TOOLS), { seed: SEED + i, numRuns: PER_ROUTE }),
        ...oddParameterRequests(method, route, op, fixtures[0]!),
      ];
      for (const req of requests) {
        const headers: Record<string, string> = {};
        const credential = credentials[req.credential];
        if (credential !== undefined) headers.authorization = credential;
        if (req.contentType !== undefined) headers["content-type"] = req.contentType;
        if (req.accept !== undefined) headers.accept = req.accept;
        const started = performance.now();
        const res = await t.app.inject({ method: req.method as "GET", url: req.url, headers, ...(req.body === undefined ? {} : { payload: req.body }) });
        const ms = performance.now() - started;
        sent++;
        const problem = problemOf(req, res.statusCode, res.body, ms);
        if (problem === undefined) continue;
        const key = `${req.method} ${req.route}: ${problem}`;
        const seen = found.get(key);
        if (seen) seen.count++;
        else {
          const body = req.body === undefined ? "" : ` body ${JSON.stringify(req.body.slice(0, 160))}${req.body.length > 160 ? `… (${req.body.length} chars)` : ""}`;
          found.set(key, { count: 1, example: `${req.method} ${req.url.slice(0, 160)} as ${req.credential}${body} → ${res.body.slice(0, 200)}` });
        }
      }
    }
    expect(sent).toBeGreaterThan(2_500);
    const report = [...found].map(([key, { count, example }]) => `${key} (${count}x), e.g. ${example}`);
    expect(report).toEqual([]);
  }, 300_000);
});
