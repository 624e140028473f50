import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Validator } from "@seriousme/openapi-schema-validator";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

describe("GET /v1/log-types", () => {
  it("publishes all 55 types with group, lifecycle flag, aliases and JSON Schema", async () => {
    const r = await t.app.inject({ method: "GET", url: "/v1/log-types", headers: t.auth });
    expect(r.statusCode).toBe(200);
    const types = r.json().log_types;
    expect(types).toHaveLength(55);
    const symptom = types.find((x: any) => x.log_type === "symptom_report");
    expect(symptom).toMatchObject({ group: "symptom", lifecycle_tracked: true, schema: { type: "object" } });
    expect(symptom.schema.required).toContain("symptoms");
    expect(types.find((x: any) => x.log_type === "condition").aliases).toContain("condition_updated");
  });

  it("answers one type by canonical name or alias, and 404 for an unknown one", async () => {
    const byAlias = await t.app.inject({ method: "GET", url: "/v1/log-types/condition_updated", headers: t.auth });
    expect(byAlias.json()).toMatchObject({ log_type: "condition", group: "profile" });
    const unknown = await t.app.inject({ method: "GET", url: "/v1/log-types/nope", headers: t.auth });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error_type).toBe("not_found_error");
  });

  it("needs a credential", async () => {
    expect((await t.app.inject({ method: "GET", url: "/v1/log-types" })).statusCode).toBe(401);
  });
});

describe("GET /openapi.json", () => {
  it("serves a valid OpenAPI document describing every route with its schemas", async () => {
    const r = await t.app.inject({ method: "GET", url: "/openapi.json" });
    expect(r.statusCode).toBe(200);
    const doc = r.json();
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    for (const path of ["/v1/logs/batch", "/v1/patients", "/v1/patients/{id}", "/v1/patients/batch", "/v1/patients/{id}/external-identifiers", "/auth/token", "/v1/organizations", "/v1/log-types", "/healthz"]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    expect(doc.paths["/v1/logs/batch"].post.requestBody).toBeDefined();
    expect(doc.paths["/v1/logs/batch"].post.responses["200"]).toBeDefined();
  });

  it("declares request and response schemas on every route", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json();
    for (const [path, ops] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        expect(op.responses, `${method} ${path}`).toBeDefined();
        expect(Object.keys(op.responses).some((s) => s.startsWith("2")), `${method} ${path} success schema`).toBe(true);
      }
    }
  });
});
