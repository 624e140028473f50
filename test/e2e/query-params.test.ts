import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { sdkClient } from "../support/olira-sdk.js";

/**
 * A query parameter a route does not declare is refused with the spec's 422, naming it and
 * the ones the route takes, as bodies and MCP arguments refuse unknown fields: dropped, a
 * misspelt filter answered as if it had matched everything.
 */
let t: TestStack;
let pid: string;
beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const logs = [
    { log_type: "lab_results", patient_id: pid, timestamp: "2026-11-02T07:00:00Z", payload: { results: [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 210, unit: "mg/dL" }] } },
    { log_type: "user_login", patient_id: pid, timestamp: "2026-11-03T10:00:00Z", payload: {} },
  ];
  await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } });
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string) => t.app.inject({ method: "GET", url, headers: t.auth });

/** The one detail of a refused parameter. */
async function refused(url: string, name: string) {
  const r = await get(url);
  expect(r.statusCode, url).toBe(422);
  const body = r.json();
  expect(body, url).toMatchObject({ error: true, status_code: 422, error_type: "validation_error", message: expect.stringContaining(name) });
  expect(body.details, url).toHaveLength(1);
  expect(body.details[0], url).toMatchObject({ type: "value_error", field: name, location: ["query", name] });
  return body.details[0] as { message: string; input_value: unknown };
}

describe("unknown query parameters", () => {
  it("are refused with the near name suggested and the route's own listed, not answered unfiltered", async () => {
    const logs = await refused(`/v1/state/${pid}/logs?limit=500&log_type=lab_results`, "log_type");
    expect(logs.message).toContain("did you mean log_types?");
    expect(logs.message).toMatch(/it takes since, until, log_types, event_types, .*include_metadata$/);
    expect(logs.input_value).toBe("lab_results");
    expect((await refused(`/v1/state/${pid}/event-modules/glucose?asof=2026-11-01`, "asof")).message).toContain("did you mean as_of?");
    expect((await refused(`/v1/state/${pid}/changes?since=2026-11-01&unitl=2026-11-05`, "unitl")).message).toContain("did you mean until?");
    const bogus = await refused(`/v1/state/${pid}/events?bogus=1`, "bogus");
    expect(bogus.message).not.toContain("did you mean");
    expect(bogus.message).toContain("GET /v1/state/:pid/events");
    // The right names answer as before.
    expect((await get(`/v1/state/${pid}/logs?limit=500&log_types=lab_results`)).json().logs.map((l: { type: string }) => l.type)).toEqual(["lab_results"]);
  });

  it("are refused on every kind of API route: lists, writes, and routes that take none", async () => {
    expect((await refused("/v1/patients?limt=1", "limt")).message).toContain("did you mean limit?");
    expect((await refused("/v1/ingestion/jobs?page_sise=5", "page_sise")).message).toContain("did you mean page_size?");
    expect((await refused(`/v1/state/${pid}/fhir/Condition?code=8867-4`, "code")).message).toContain("it takes _revinclude, as_of, known_at, _format, _pretty, _count");
    // What FHIR clients send on every read is taken (and ignored); XML is not served.
    const fhir = await get(`/v1/state/${pid}/fhir/Observation?_format=json&_pretty=true&_count=50&code=2345-7`);
    expect(fhir.statusCode).toBe(200);
    expect(fhir.json().entry.length).toBeGreaterThan(0);
    expect((await get(`/v1/state/${pid}/fhir/summary?_format=application/fhir%2Bjson`)).statusCode).toBe(200);
    expect((await get(`/v1/state/${pid}/fhir/Condition?_format=xml`)).statusCode).toBe(422);
    expect((await refused(`/v1/patients/${pid}?as_of=2026-11-01`, "as_of")).message).toBe("is not a query parameter of GET /v1/patients/:id, which takes none");
    expect((await refused("/v1/log-types?group=labs", "group")).message).toContain("which takes none");
    const write = await t.app.inject({ method: "POST", url: "/v1/logs/batch?atomic=true", headers: t.auth, payload: { logs: [] } });
    expect(write.statusCode).toBe(422);
    expect(write.json().details[0]).toMatchObject({ location: ["query", "atomic"] });
    // Every unknown one is listed.
    const two = await get(`/v1/state/${pid}/logs?a=1&b=2`);
    expect(two.json().details.map((d: { field: string }) => d.field)).toEqual(["a", "b"]);
  });

  it("still takes every parameter the hosted product's Python SDK sends, route by route (olira-compat.md)", async () => {
    const sdk = sdkClient(t.app, t.adminKey);
    const state = `/v1/state/${pid}`;
    const calls: [string, Record<string, string | number | boolean | readonly string[]>][] = [
      ["/v1/patients", { limit: 100, offset: 0, external_system: "mrn", external_value: "x" }],
      ["/v1/patients", { limit: 100, offset: 0, system: "mrn", integration_id: "ehr-1" }],
      [`${state}/stable`, { modules: ["demographics", "medications"] }],
      [`${state}/views/symptom_snapshot/recent`, { limit: 50 }],
      [`${state}/logs`, { limit: 50, since: "2026-11-01T00:00:00Z", event_types: ["lab_results_received"], trace_type: "visit", trace_id: "v1" }],
      [`${state}/events`, { status: "complete", limit: 50, since: "2026-11-01T00:00:00Z", log_type: "lab_results", trace_type: "visit", trace_id: "v1" }],
      [`${state}/memories`, { limit: 100, query: "walk" }],
      ["/v1/ingestion/jobs", { page: 1, pageSize: 20, idempotency_key: "k" }],
    ];
    for (const [path, query] of calls) expect((await sdk.get(path, query)).statusCode, `${path} ${JSON.stringify(query)}`).toBe(200);
    const doomed = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
    expect((await sdk.delete(`/v1/patients/${doomed}`, undefined, { permanent: true })).statusCode).toBe(200);
  });

  it("are taken by the routes without a credential, which probes and browsers call with their own", async () => {
    expect((await t.app.inject({ method: "GET", url: "/healthz?_=1700000000" })).statusCode).toBe(200);
    expect((await t.app.inject({ method: "GET", url: "/openapi.json?v=2" })).statusCode).toBe(200);
  });
});
