import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { backendUnavailable } from "./backend-unavailable.js";
import { AppError, ERROR_CATALOGUE, MAX_ERROR_DETAILS, echoField, echoValue, errorBody, fieldIssue, moreDetails, type ErrorCode, type ErrorDetail } from "../../src/errors.js";
import { FIRST_PROBLEM_ONLY } from "./validators.js";
import { bearerChallenge } from "./protected-resource.js";
import { queryNames, unknownParamMessage } from "./query-params.js";

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function pathParts(pointer: string): (string | number)[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

function valueAt(root: unknown, parts: (string | number)[]): unknown {
  let v: unknown = root;
  for (const p of parts) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}

/**
 * A union of literals (`format: "markdown" | "raw"`) fails in ajv as one "must be equal to
 * constant" per literal plus "must match a schema in anyOf": one item saying which values
 * are allowed says it better. Linear in the issues: a hostile body can make thousands.
 */
function oneOfConstants(issues: AjvIssue[]): AjvIssue[] {
  const unions = new Set<string>();
  for (const v of issues) if (v.keyword === "anyOf") unions.add(v.instancePath);
  const consts = new Map<string, unknown[]>();
  for (const v of issues) {
    if (v.keyword !== "const" || !unions.has(v.instancePath)) continue;
    const list = consts.get(v.instancePath);
    if (list) list.push(v.params.allowedValue);
    else consts.set(v.instancePath, [v.params.allowedValue]);
  }
  const out: AjvIssue[] = [];
  const done = new Set<string>();
  for (const v of issues) {
    const path = v.instancePath;
    const allowedValues = consts.get(path);
    if (allowedValues === undefined || (v.keyword !== "const" && v.keyword !== "anyOf")) out.push(v);
    else if (!done.has(path)) {
      done.add(path);
      out.push({ instancePath: path, keyword: "enum", message: "must be one of", params: { allowedValues } });
    }
  }
  return out;
}

/** Issues that only say a value is not of one union branch's type. */
const WRONG_BRANCH = new Set(["type", "anyOf"]);

/**
 * A union fails in ajv with an issue per branch. When the value is of one branch's type
 * (an array of 1,001 values where a string, a number or an array of at most 1,000 is
 * taken), what that branch says is the problem; "must be string" and "must be number"
 * from the others only hide it. Without such a branch every issue stays.
 */
function branchThatFits(issues: AjvIssue[]): AjvIssue[] {
  const unions = new Set<string>();
  for (const v of issues) if (v.keyword === "anyOf") unions.add(v.instancePath);
  if (unions.size === 0) return issues;
  const fitted = new Set<string>();
  for (const v of issues) {
    if (unions.has(v.instancePath) && !WRONG_BRANCH.has(v.keyword)) fitted.add(v.instancePath);
    // A deeper issue: a branch took the value's type and failed inside it.
    for (let at = v.instancePath.lastIndexOf("/"); at > 0; at = v.instancePath.lastIndexOf("/", at - 1)) {
      const outer = v.instancePath.slice(0, at);
      if (unions.has(outer)) fitted.add(outer);
    }
  }
  return fitted.size === 0 ? issues : issues.filter((v) => !(fitted.has(v.instancePath) && WRONG_BRANCH.has(v.keyword)));
}

/**
 * Fastify's schema failures (ajv) as the spec's located validation items. Only the items
 * the error body lists are located and echoed; the last says how many were left out.
 */
function schemaDetails(req: FastifyRequest, err: FastifyError): ErrorDetail[] {
  const context = (err.validationContext ?? "body");
  const root = context === "body" ? req.body : context === "querystring" ? req.query : context === "params" ? req.params : req.headers;
  const where = context === "querystring" ? "query" : context === "params" ? "path" : context;
  const all = (err.validation ?? []) as AjvIssue[];
  const firstOnly = all.some((v) => v.keyword === FIRST_PROBLEM_ONLY);
  const issues = branchThatFits(oneOfConstants(firstOnly ? all.filter((v) => v.keyword !== FIRST_PROBLEM_ONLY) : all));
  const shown = issues.length > MAX_ERROR_DETAILS ? issues.slice(0, MAX_ERROR_DETAILS - 1) : issues;
  const details = shown.map((v) => {
    const parts = pathParts(v.instancePath);
    if (v.keyword === "required" && typeof v.params.missingProperty === "string") {
      return fieldIssue([where, ...parts, v.params.missingProperty], "is required", echoField(valueAt(root, parts), v.params.missingProperty));
    }
    if (v.keyword === "additionalProperties" && typeof v.params.additionalProperty === "string") {
      const name = v.params.additionalProperty;
      const message = where === "query" ? unknownParamMessage(name, routeName(req), queryNames(req.routeOptions.schema?.querystring)) : "is not an allowed field";
      return fieldIssue([where, ...parts, name], message, echoField(valueAt(root, parts), name));
    }
    const allowed = Array.isArray(v.params.allowedValues) ? `: ${(v.params.allowedValues as unknown[]).join(", ")}` : "";
    return fieldIssue([where, ...parts], `${v.message ?? "is invalid"}${allowed}`, echoValue(valueAt(root, parts)));
  });
  if (shown.length < issues.length) details.push(moreDetails(issues.length - shown.length));
  else if (firstOnly) details.push(moreDetails());
  return details;
}

/** The route as a message names it: `GET /v1/state/:pid/logs`. */
const routeName = (req: FastifyRequest): string => `${req.method} ${req.routeOptions.url ?? req.url.split("?")[0]}`;

/** Fastify's own error codes that are the client's fault, mapped onto the catalogue. */
function fastifyCode(err: FastifyError): ErrorCode | undefined {
  switch (err.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return "payload_too_large";
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return "unsupported_media_type";
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return "bad_request";
  }
  if (err instanceof SyntaxError || err.statusCode === 400) return "bad_request";
  if (err.statusCode === 429) return "rate_limited";
  return undefined;
}

/**
 * The one place where failures become the spec's error body. `publicUrl` (PSS_PUBLIC_URL)
 * is where a 401's challenge says the protected-resource metadata is.
 */
export function installErrorHandler(app: FastifyInstance, publicUrl: string | null = null): void {
  app.setErrorHandler((err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof AppError) {
      const { status, error_type } = ERROR_CATALOGUE[err.code];
      if (err.headers) reply.headers(err.headers);
      if (status === 401 && !reply.hasHeader("www-authenticate")) reply.header("www-authenticate", bearerChallenge(req, publicUrl, err.message));
      if (status >= 500) req.log.error({ err }, err.message);
      return reply.status(status).send(errorBody(status, error_type, err.message, err.details));
    }
    if (err.validation) {
      const details = schemaDetails(req, err);
      const first = details[0];
      const message = first ? `${first.field || err.validationContext} ${first.message}` : err.message;
      return reply.status(422).send(errorBody(422, "validation_error", `request validation failed: ${message}`, details));
    }
    const code = fastifyCode(err);
    if (code !== undefined) {
      const { status, error_type } = ERROR_CATALOGUE[code];
      const message = code === "bad_request" && err.code?.startsWith("FST_ERR_CTP")
        ? `malformed JSON body: ${err.message}`
        : code === "unsupported_media_type"
          ? `unsupported content type ${JSON.stringify(req.headers["content-type"] ?? "(none)")}: send the body as application/json (application/fhir+json also on the FHIR routes; a file upload takes any type)`
          : err.message;
      return reply.status(status).send(errorBody(status, error_type, message, [{ type: code, message }]));
    }
    const down = backendUnavailable(err);
    if (down !== undefined) {
      req.log.warn({ err }, `${down} unavailable`);
      const message = `${down} is unavailable; retry shortly (a write that got this answer may or may not be stored: retry it with the same idempotency keys)`;
      // No Retry-After: clients (ours included) read a 503 with one as "nothing was applied",
      // and a write may have reached JetStream before Redis stopped answering.
      return reply.status(503).send(errorBody(503, "server_error", message, [{ type: "backend_unavailable", message: `${down} did not answer` }]));
    }
    req.log.error({ err }, "unhandled error");
    return reply.status(500).send(errorBody(500, "internal_server_error", "unexpected failure; it has been logged"));
  });
  app.setNotFoundHandler((req, reply) => {
    const message = `no route ${req.method} ${req.url.split("?")[0]}`;
    return reply.status(404).send(errorBody(404, "not_found_error", message, [{ type: "route_not_found", message }]));
  });
}
