import Fastify from "fastify";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { installErrorHandler } from "../../app/http/error-handler.js";
import { ALL_PROBLEMS_MAX_VALUES, createValidatorCompiler } from "../../app/http/validators.js";

async function app() {
  const a = Fastify({ bodyLimit: 50 * 1024 * 1024 });
  installErrorHandler(a);
  a.setValidatorCompiler(createValidatorCompiler([]));
  const Item = Type.Object({ name: Type.String(), kind: Type.Union([Type.Literal("a"), Type.Literal("b")]) }, { additionalProperties: false });
  a.post("/items", { schema: { body: Type.Object({ items: Type.Array(Item), note: Type.Optional(Type.String()) }) } }, async (req) => req.body);
  a.get("/page", { schema: { querystring: Type.Object({ page: Type.Integer({ minimum: 1 }), size: Type.Optional(Type.Number()) }) } }, async (req) => req.query);
  a.post("/page", { schema: { body: Type.Object({ page: Type.Integer({ minimum: 1 }) }) } }, async (req) => req.body);
  await a.ready();
  return a;
}

describe("request schema checks", () => {
  it("report every problem of a small body, each located", async () => {
    const a = await app();
    const r = await a.inject({ method: "POST", url: "/items", payload: { items: [{ name: 1, kind: "a" }, { name: "x", kind: "c", extra: true }], note: 5 } });
    expect(r.statusCode).toBe(422);
    expect(r.json().details.map((d: { field: string }) => d.field).sort()).toEqual(["items.0.name", "items.1.extra", "items.1.kind", "note"]);
    expect(r.json().details.find((d: { field: string }) => d.field === "items.1.kind").message).toBe("must be one of: a, b");
  });

  it(`report only the first problem of a body of more than ${ALL_PROBLEMS_MAX_VALUES} values, saying that others may follow`, async () => {
    const a = await app();
    const items = Array.from({ length: 300_000 }, () => ({ name: 1, kind: "c" }));
    const started = performance.now();
    const r = await a.inject({ method: "POST", url: "/items", payload: { items } });
    // allErrors over this body built about 1.5 million errors and took seconds.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(r.statusCode).toBe(422);
    const { details, message } = r.json();
    expect(message).toBe("request validation failed: items.0.name must be string");
    expect(details).toHaveLength(2);
    expect(details[1]).toEqual({ type: "more_details", message: "Other problems may follow; fix the ones above and send the request again" });
  });

  it("let a large valid body through, with defaults and coercion as before", async () => {
    const a = await app();
    const items = Array.from({ length: 50_000 }, (_, i) => ({ name: `n${i}`, kind: i % 2 ? "a" : "b" }));
    const r = await a.inject({ method: "POST", url: "/items", payload: { items } });
    expect(r.statusCode).toBe(200);
    expect(r.json().items).toHaveLength(50_000);
  });

  it("refuse 1e400, which reads as Infinity, as an integer or a number, in a query string or a body", async () => {
    const a = await app();
    for (const url of ["/page?page=1e400", "/page?page=2&size=1e400", "/page?page=-1e400"]) {
      const r = await a.inject({ url });
      expect(r.statusCode, url).toBe(422);
      expect(r.json().error_type).toBe("validation_error");
    }
    const body = await a.inject({ method: "POST", url: "/page", headers: { "content-type": "application/json" }, payload: '{"page":1e400}' });
    expect(body.statusCode).toBe(422);
    expect((await a.inject({ url: "/page?page=3&size=2.5" })).json()).toEqual({ page: 3, size: 2.5 });
  });
});
