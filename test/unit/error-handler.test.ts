import Fastify from "fastify";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { installErrorHandler } from "../../app/http/error-handler.js";
import { ErrorReply, TimeoutError as RedisTimeoutError } from "redis";
import { TimeoutError as NatsTimeoutError } from "@nats-io/nats-core";
import { AppError, ERROR_CATALOGUE } from "../../src/errors.js";
import { createValidatorCompiler } from "../../app/http/validators.js";

async function app() {
  const a = Fastify({ bodyLimit: 100 });
  installErrorHandler(a);
  a.setValidatorCompiler(createValidatorCompiler([]));
  a.post("/typed", { schema: { body: Type.Object({ name: Type.String(), age: Type.Integer({ minimum: 0 }) }) } }, async () => ({ ok: true }));
  const union = Type.Union([Type.String(), Type.Number(), Type.Array(Type.String(), { maxItems: 3 }), Type.Object({ id: Type.String() }, { additionalProperties: false })]);
  a.post("/union", { schema: { body: Type.Object({ value: union }) } }, async () => ({ ok: true }));
  a.get("/throw/:code", async (req) => {
    const code = (req.params as { code: keyof typeof ERROR_CATALOGUE }).code;
    throw new AppError(code, `failure ${code}`, [{ type: "x", message: "y" }]);
  });
  a.get("/boom", async () => {
    throw new Error("secret internals");
  });
  a.get("/redis-down", async () => {
    throw new RedisTimeoutError();
  });
  a.get("/nats-down", async () => {
    throw new NatsTimeoutError();
  });
  a.get("/redis-refused", async () => {
    throw new ErrorReply("ERR unknown command");
  });
  await a.ready();
  return a;
}

const bodyShape = (status: number, type: string) => ({
  error: true,
  status_code: status,
  error_type: type,
  message: expect.any(String),
  details: expect.any(Array),
  timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
});

describe("the error handler", () => {
  it.each(Object.entries(ERROR_CATALOGUE))("maps AppError %s to its status and error_type", async (code, { status, error_type }) => {
    const a = await app();
    const r = await a.inject({ method: "GET", url: `/throw/${code}` });
    expect(r.statusCode).toBe(status);
    expect(r.json()).toEqual({ ...bodyShape(status, error_type), message: `failure ${code}`, details: [{ type: "x", message: "y" }] });
  });

  it("reports, for a union, what the branch of the value's type says, and every branch when none is of its type", async () => {
    const a = await app();
    const details = async (value: unknown) => (await a.inject({ method: "POST", url: "/union", payload: { value } })).json().details.map((d: { field: string; message: string }) => `${d.field} ${d.message}`);
    expect(await details(["a", "b", "c", "d"])).toEqual(["value must NOT have more than 3 items"]);
    expect(await details(["a", 2])).toEqual(["value.1 must be string"]);
    expect(await details({ id: 1 })).toEqual(["value.id must be string"]);
    expect(await details(true)).toEqual(["value must be string", "value must be number", "value must be array", "value must be object", "value must match a schema in anyOf"]);
  });

  it("turns schema failures into 422 with field, location and input_value", async () => {
    const a = await app();
    const r = await a.inject({ method: "POST", url: "/typed", payload: { age: -1 } });
    expect(r.statusCode).toBe(422);
    expect(r.json()).toMatchObject(bodyShape(422, "validation_error"));
    expect(r.json().details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: "name", location: ["body", "name"], message: "is required" }),
        expect.objectContaining({ field: "age", location: ["body", "age"], input_value: -1 }),
      ]),
    );
  });

  it("describes a large failing value by its size instead of echoing it whole", async () => {
    const a = Fastify();
    installErrorHandler(a);
    a.setValidatorCompiler(createValidatorCompiler([]));
    a.post("/list", { schema: { body: Type.Object({ logs: Type.Array(Type.Unknown(), { maxItems: 10 }) }) } }, async () => ({ ok: true }));
    await a.ready();
    const logs = Array.from({ length: 500 }, (_, i) => ({ log_type: "user_login", i }));
    const r = await a.inject({ method: "POST", url: "/list", payload: { logs } });
    expect(r.statusCode).toBe(422);
    expect(r.json().details[0]).toMatchObject({ field: "logs", input_value: "(an array of 500 items, over 2048 bytes as JSON)" });
    expect(r.body.length).toBeLessThan(1000);
    const small = await a.inject({ method: "POST", url: "/list", payload: { logs: logs.slice(0, 11) } });
    expect(small.json().details[0].input_value).toEqual(logs.slice(0, 11));
  });

  it("says which values a union of literals takes, in one item", async () => {
    const a = Fastify();
    installErrorHandler(a);
    a.setValidatorCompiler(createValidatorCompiler([]));
    a.get("/view", { schema: { querystring: Type.Object({ format: Type.Optional(Type.Union([Type.Literal("markdown"), Type.Literal("raw")])) }) } }, async () => ({ ok: true }));
    await a.ready();
    const r = await a.inject({ method: "GET", url: "/view?format=xml" });
    expect(r.statusCode).toBe(422);
    expect(r.json().details).toEqual([expect.objectContaining({ field: "format", message: "must be one of: markdown, raw", input_value: "xml" })]);
  });

  it("does not coerce body types: a number is not a string", async () => {
    const a = await app();
    const r = await a.inject({ method: "POST", url: "/typed", payload: { name: 5, age: 1 } });
    expect(r.statusCode).toBe(422);
  });

  it("answers malformed JSON with 400 and the error body", async () => {
    const a = await app();
    const r = await a.inject({ method: "POST", url: "/typed", headers: { "content-type": "application/json" }, payload: "{nope" });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject(bodyShape(400, "bad_request_error"));
  });

  it("answers an oversized body with 413 payload_too_large", async () => {
    const a = await app();
    const r = await a.inject({ method: "POST", url: "/typed", payload: { name: "x".repeat(500), age: 1 } });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toMatchObject(bodyShape(413, "payload_too_large"));
  });

  it("answers an unsupported content type with 415 and the error body", async () => {
    const a = await app();
    const r = await a.inject({ method: "POST", url: "/typed", headers: { "content-type": "text/csv" }, payload: "a,b" });
    expect(r.statusCode).toBe(415);
    expect(r.json()).toMatchObject({ error: true, status_code: 415 });
  });

  it("answers an unknown route with 404 not_found_error", async () => {
    const a = await app();
    const r = await a.inject({ method: "GET", url: "/nowhere?x=1" });
    expect(r.statusCode).toBe(404);
    expect(r.json()).toMatchObject({ ...bodyShape(404, "not_found_error"), message: "no route GET /nowhere" });
  });

  it("hides an unexpected error's message behind a 500", async () => {
    const a = await app();
    const r = await a.inject({ method: "GET", url: "/boom" });
    expect(r.statusCode).toBe(500);
    expect(r.json()).toMatchObject(bodyShape(500, "internal_server_error"));
    expect(r.body).not.toContain("secret internals");
  });

  it("answers 503 when Redis or NATS does not answer, and 500 for what they refused", async () => {
    const a = await app();
    for (const [url, backend] of [["/redis-down", "Redis"], ["/nats-down", "NATS"]] as const) {
      const r = await a.inject({ method: "GET", url });
      expect(r.statusCode, url).toBe(503);
      // Without Retry-After, which clients read as "nothing was applied": a write may have been.
      expect(r.headers["retry-after"]).toBeUndefined();
      expect(r.json()).toMatchObject({ ...bodyShape(503, "server_error"), details: [{ type: "backend_unavailable", message: `${backend} did not answer` }] });
      expect(r.json().message).toContain(`${backend} is unavailable`);
    }
    expect((await a.inject({ method: "GET", url: "/redis-refused" })).statusCode).toBe(500);
  });
});
