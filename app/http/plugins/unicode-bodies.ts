import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError, fieldIssue } from "../../../src/errors.js";
import { hasLoneSurrogate, loneSurrogateMessage, loneSurrogatesIn } from "../../../src/unicode-text.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * A body key whose items the route checks for lone surrogates itself, one by one, so
     * that each bad item is a located error of its own (the batch route's `logs`).
     */
    textCheckedPerItem?: string;
  }
}

/** Most lone surrogates of one body that are reported, each with its place. */
const REPORTED = 10;

/** The body without the key its route checks itself. */
function bodyToCheck(req: FastifyRequest): unknown {
  const own = req.routeOptions.config?.textCheckedPerItem;
  const body = req.body;
  if (own === undefined || body === null || typeof body !== "object" || Array.isArray(body) || !Object.hasOwn(body, own)) return body;
  const { [own]: _checked, ...rest } = body as Record<string, unknown>;
  return rest;
}

/**
 * Every string of a JSON body, and every key, must be Unicode text. A `"\ud800"` escape
 * parses to half a character: the log query's ClickHouse store refuses it, a digest of it
 * (external identifiers are claimed by digest) equals that of any other half, and strict
 * JSON readers (the .NET SDK's) fail on the answer that echoes it. Refused before the
 * schema check, as a 422 naming each place.
 */
export const unicodeBodiesPlugin = fp(async (app: FastifyInstance) => {
  app.addHook("preValidation", async (req) => {
    const body = bodyToCheck(req);
    if (body === undefined || !hasLoneSurrogate(body)) return;
    const details = loneSurrogatesIn(body, REPORTED).map((s) => fieldIssue(["body", ...s.path], loneSurrogateMessage(s), s.text));
    throw new AppError("validation", `request validation failed: ${details[0]!.field} ${details[0]!.message}`, details);
  });
});
