import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

/** Path segments that are no id of this service and no valid NATS KV key either. */
const NOT_IDS = ["..", "%00", encodeURIComponent("😀"), "%0D%0A", "a*", "%3E", ".a", "a.", "a..b", "a%20b", "key_%00", "key_a.b"];

describe("path parameters that cannot name anything", () => {
  it("revoke an API key: 404 with the spec's body, never a 500", async () => {
    for (const id of NOT_IDS) {
      const r = await t.app.inject({ method: "DELETE", url: `/v1/api-keys/${id}`, headers: t.auth });
      expect(r.statusCode, id).toBe(404);
      expect(r.json(), id).toMatchObject({ error: true, status_code: 404, error_type: "not_found_error" });
    }
  });

  it("answer 404 (or 422 for a body or query the route needs) on every route of the OpenAPI document that takes one", async () => {
    type Op = { requestBody?: unknown; parameters?: { in: string; required?: boolean }[] };
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, Record<string, Op>> }>();
    const needsInput = (op: Op) => op.requestBody !== undefined || (op.parameters ?? []).some((p) => p.in === "query" && p.required === true);
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      path.includes("{") ? Object.entries(ops).map(([m, op]) => [m.toUpperCase(), path, needsInput(op)] as const) : []);
    expect(routes.length).toBeGreaterThan(20);
    for (const [method, path, hasBody] of routes) {
      for (const id of NOT_IDS) {
        const url = path.replace(/\{[^}]+\}/g, id);
        const r = await t.app.inject({ method: method as "GET", url, headers: t.auth, ...(hasBody && method !== "GET" ? { payload: {} } : {}) });
        expect(hasBody ? [404, 422] : [404], `${method} ${url}`).toContain(r.statusCode);
        expect(r.json().error, `${method} ${url}`).toBe(true);
      }
    }
  });
});
