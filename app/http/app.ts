import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from "fastify";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Services } from "../services.js";
import { installErrorHandler } from "./error-handler.js";
import { AppError, errorBody } from "../../src/errors.js";
import { bodyShape, bodyShapeError, jsonBodyText, overflowingNumberError, parseJsonBody } from "./body-limits.js";
import { authPlugin } from "./plugins/auth.js";
import { closedQueriesPlugin } from "./plugins/closed-queries.js";
import { ErrorBodySchema } from "./schemas.js";
import { createValidatorCompiler } from "./validators.js";
import { PatientSchema } from "../../src/control/patient-schemas.js";
import { wellKnownRoutes } from "./routes/well-known.js";
import { healthRoutes } from "./routes/health.js";
import { authRoutes } from "./routes/auth.js";
import { organizationRoutes } from "./routes/organizations.js";
import { patientRoutes } from "./routes/patients/index.js";
import { consoleRoutes } from "./routes/console.js";
import { fhirRoutes } from "./routes/fhir.js";
import { logBatchRoutes, LogInputSchema } from "./routes/logs/batch.js";
import { logTypeRoutes } from "./routes/logs/log-types.js";
import { stateRoutes } from "./routes/state/index.js";
import { deadLetterRoutes } from "./routes/dead-letters.js";
import { queryRoutes } from "./routes/query.js";
import { patientTokenRoutes } from "./routes/patient-tokens.js";
import { mcpPlugin } from "../mcp/plugin.js";
import { rateLimitPlugin } from "./plugins/rate-limit.js";
import { auditPlugin } from "./plugins/audit.js";
import { unicodeBodiesPlugin } from "./plugins/unicode-bodies.js";
import { projectRoutes } from "./routes/projects.js";
import { apiKeyRoutes } from "./routes/api-keys.js";
import { auditRoutes } from "./routes/audit.js";
import { IngestionCancelSchema, IngestionRecordSchema, ingestionRoutes } from "./routes/ingestion.js";
import { ingestionPreviewRoutes } from "./routes/ingestion-preview.js";
import { FhirBundleSchema } from "./routes/state/fhir.js";
import { ModuleDiffSchema } from "./routes/state/schemas.js";
import { sdkConfigRoutes } from "./routes/sdk-config.js";
import { loggerOptions, type LoggerSetting } from "../logger.js";
import { MemberObserver } from "../observe.js";
import { metricsRoutes } from "./routes/metrics.js";
import { requestMetricsPlugin } from "./plugins/request-metrics.js";

export interface AppOptions {
  /** Pino options; false silences logs (tests). `stream` sends the lines elsewhere than stdout. */
  logger?: LoggerSetting;
  /** A pino logger made with loggerOptions (the process's, shared with its background work); wins over `logger`. */
  loggerInstance?: FastifyBaseLogger;
  /** What /healthz and /metrics report: by default this process alone (no supervisor). */
  observer?: MemberObserver;
}

/**
 * Bodies are plain data: JSON.parse alone, without the prototype-poisoning scan (nothing
 * here merges request objects into prototypes; payloads are copied as data). The JSON
 * parser that replaces Fastify's (parseJsonBody) is JSON.parse; Fastify is told the same.
 */
const POISONING = "ignore" as const;

/** Builds the HTTP app without listening, so tests drive it with inject() or a real socket. */
export async function buildApp(services: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...(opts.loggerInstance ? { loggerInstance: opts.loggerInstance } : { logger: loggerOptions(opts.logger, services.config.logLevel) }),
    bodyLimit: services.config.maxBodyBytes,
    // Keep-alive clients (SDKs, gateways) reuse sockets across batches.
    keepAliveTimeout: 65_000,
    onProtoPoisoning: POISONING,
    onConstructorPoisoning: POISONING,
    // What the router refuses before any route runs gets the spec's error body too: a path
    // parameter over Fastify's 100 characters is a 422 like one of 65 to 100, a URL that
    // does not decode a 400.
    frameworkErrors: (err, _req, res) => {
      const reply = res as unknown as FastifyReply;
      const tooLong = err.code === "FST_ERR_MAX_PARAM_LENGTH";
      const status: 422 | 400 = tooLong ? 422 : 400;
      const message = tooLong ? "a path parameter is longer than 100 characters" : "the URL has a malformed component";
      void reply.code(status).header("content-type", "application/json").send(errorBody(status, tooLong ? "validation_error" : "bad_request_error", message));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  installErrorHandler(app, services.config.publicUrl);
  // First, so its onResponse hook times every request, refused ones included.
  await app.register(requestMetricsPlugin, { metrics: services.metrics });
  // Many HTTP clients send `content-type: application/json` on every request, bodiless
  // POSTs (cancel, confirm) included: an empty body reads as none, and a route that needs
  // one refuses it through its schema, as any other wrong body.
  // A body past the shape limits (depth, members of an object) is refused before parsing.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser(["application/json", "application/fhir+json"], { parseAs: "buffer" }, (req, raw, done) => {
    const text = jsonBodyText(req.headers["content-type"], raw as Buffer);
    if (typeof text !== "string") return done(text, undefined);
    if (text === "") return done(null, undefined);
    const shape = bodyShape(text);
    const refused = bodyShapeError(shape);
    if (refused) return done(refused, undefined);
    const parsed = parseJsonBody(text);
    if (parsed instanceof AppError) return done(parsed, undefined);
    const overflow = overflowingNumberError(parsed.value, shape);
    if (overflow) done(overflow, undefined);
    else done(null, parsed.value);
  });
  // Fastify reads text/plain as a string by default, which a route's schema then refused
  // as a wrong body (422); no route takes text, so it is a 415 like any other type.
  app.removeContentTypeParser("text/plain");
  app.addSchema(ErrorBodySchema);
  app.addSchema(PatientSchema);
  // Published for clients only: the batch route checks each log itself (src/logs/envelope.ts),
  // a job each inline record.
  app.addSchema(LogInputSchema);
  app.addSchema(IngestionRecordSchema);
  app.addSchema(IngestionCancelSchema);
  app.addSchema(FhirBundleSchema);
  app.addSchema(ModuleDiffSchema);
  app.setValidatorCompiler(createValidatorCompiler([ErrorBodySchema, PatientSchema]));
  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: { title: "Patient State Service", version: "1.0.0", description: "Typed patient logs in, compiled patient state out." },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "API key, JWT from /auth/token, or patient token" } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`) },
  });
  // Before any route: auth refuses routes without an access rule, closed-queries those with
  // an open query string, and the rate limiter attaches its check to each route as it is added.
  await app.register(authPlugin, { services });
  await app.register(closedQueriesPlugin);
  await app.register(rateLimitPlugin, { services });
  await app.register(auditPlugin, { services });
  await app.register(unicodeBodiesPlugin);

  const observer = opts.observer ?? new MemberObserver(services);
  await app.register(healthRoutes, { observer });
  await app.register(wellKnownRoutes, { publicUrl: services.config.publicUrl });
  // With PSS_METRICS_PORT, /metrics is served on that port only (app/metrics-server.ts).
  if (services.config.metricsPort === null) await app.register(metricsRoutes, { observer });
  await app.register(authRoutes, { services });
  await app.register(organizationRoutes, { services });
  await app.register(patientRoutes, { services });
  await app.register(logBatchRoutes, { services });
  await app.register(logTypeRoutes, { services });
  await app.register(fhirRoutes, { services });
  await app.register(consoleRoutes);
  await app.register(stateRoutes, { services });
  await app.register(deadLetterRoutes, { services });
  await app.register(queryRoutes, { services });
  await app.register(patientTokenRoutes, { services });
  await app.register(mcpPlugin, { services });
  await app.register(projectRoutes, { services });
  await app.register(apiKeyRoutes, { services });
  await app.register(auditRoutes, { services });
  await app.register(ingestionRoutes, { services });
  await app.register(ingestionPreviewRoutes, { services });
  await app.register(sdkConfigRoutes, { services });

  app.get("/openapi.json", { config: { scope: false }, schema: { hide: true } }, async () => app.swagger());
  return app;
}
