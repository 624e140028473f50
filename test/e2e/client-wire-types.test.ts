import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REGENERATE, WIRE_FILE, wireTypesSource } from "../../infra/scripts/gen-client-types.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

/** The OpenAPI document as the app publishes it, a fresh copy each time. */
const openapi = () => structuredClone(t.app.swagger()) as { paths: Record<string, any>; components: { schemas: Record<string, any> } };
const committed = () => readFileSync(WIRE_FILE, "utf8");

describe("client/wire.ts, the client's wire shapes", () => {
  it("is what the routes' schemas generate today", async () => {
    const generated = await wireTypesSource(openapi());
    expect(committed(), `client/wire.ts differs from the routes' schemas: run \`${REGENERATE}\` and commit client/wire.ts`).toBe(generated);
  });

  it("differs once a route's response schema changes", async () => {
    const doc = openapi();
    const project = doc.paths["/v1/projects/{id}"].get.responses["200"].content["application/json"].schema;
    project.properties.region = { type: "string" };
    project.required.push("region");
    expect(await wireTypesSource(doc)).not.toBe(committed());
  });

  it("differs once a named schema changes", async () => {
    const doc = openapi();
    delete doc.components.schemas.Patient.properties.timezone;
    expect(await wireTypesSource(doc)).not.toBe(committed());
  });
});
