import Fastify, { type FastifyInstance } from "fastify";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { installErrorHandler } from "../../app/http/error-handler.js";
import { closedQueriesPlugin } from "../../app/http/plugins/closed-queries.js";
import { nearNames, QueryParams, unknownParamMessage } from "../../app/http/query-params.js";
import { createValidatorCompiler } from "../../app/http/validators.js";

async function app(register: (a: FastifyInstance) => void) {
  const a = Fastify();
  installErrorHandler(a);
  a.setValidatorCompiler(createValidatorCompiler([]));
  await a.register(closedQueriesPlugin);
  register(a);
  await a.ready();
  return a;
}

describe("closed query strings", () => {
  it("suggest the declared name a misspelt one is a slip of, and none for a name far from every one", () => {
    const logs = ["since", "until", "log_types", "event_types", "trace", "limit", "cursor"];
    expect(nearNames("log_type", logs)).toEqual(["log_types"]);
    expect(nearNames("unitl", logs)).toEqual(["until"]);
    expect(nearNames("Log-Types", logs)).toEqual(["log_types"]);
    expect(nearNames("asof", ["as_of", "known_at"])).toEqual(["as_of"]);
    expect(nearNames("page_sise", ["page", "pageSize", "page_size"])).toEqual(["page_size"]);
    expect(nearNames("bogus", logs)).toEqual([]);
    expect(nearNames("x", ["to", "from"])).toEqual([]);
    expect(nearNames("_", logs)).toEqual([]);
    expect(unknownParamMessage("x", "GET /v1/patients/:id", [])).toBe("is not a query parameter of GET /v1/patients/:id, which takes none");
  });

  it("refuse, with the spec's 422, a parameter a route does not declare, and one of a route that declares none", async () => {
    const a = await app((x) => {
      x.get("/reads", { config: { scope: "sdk:state-read" }, schema: { querystring: QueryParams({ since: Type.Optional(Type.String()) }) } }, async (req) => req.query);
      x.get("/plain", { config: { scope: "sdk:state-read" } }, async () => ({ ok: true }));
      x.get("/probe", { config: { scope: false } }, async () => ({ ok: true }));
    });
    expect((await a.inject("/reads?since=2026-01-01")).json()).toEqual({ since: "2026-01-01" });
    const r = await a.inject("/reads?snice=2026-01-01");
    expect(r.statusCode).toBe(422);
    expect(r.json()).toMatchObject({
      message: "request validation failed: snice is not a query parameter of GET /reads (did you mean since?); it takes since",
      details: [{ field: "snice", location: ["query", "snice"], input_value: "2026-01-01" }],
    });
    expect((await a.inject("/plain?_=1")).json().details[0].message).toBe("is not a query parameter of GET /plain, which takes none");
    expect((await a.inject("/plain")).statusCode).toBe(200);
    // A route without a credential takes any: probes and browsers add their own.
    expect((await a.inject("/probe?_=1")).statusCode).toBe(200);
  });

  it("stop the start at a route whose query string is open, so none drops a parameter by omission", async () => {
    await expect(app((x) => {
      x.get("/open", { config: { scope: "sdk:state-read" }, schema: { querystring: Type.Object({ since: Type.Optional(Type.String()) }) } }, async () => ({}));
    })).rejects.toThrow(/GET \/open declares an open querystring/);
  });
});
