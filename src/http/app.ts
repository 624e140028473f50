import Fastify, { type FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Services } from "../services.js";
import { installErrorHandler } from "./error-handler.js";
import { authPlugin } from "./plugins/auth.js";
import { ErrorBodySchema } from "./schemas.js";
import { createValidatorCompiler } from "./validators.js";
import { PatientSchema } from "./routes/patients/schemas.js";
import { healthRoutes } from "./routes/health.js";
import { authRoutes } from "./routes/auth.js";
import { organizationRoutes } from "./routes/organizations.js";
import { patientRoutes } from "./routes/patients/index.js";
import { logBatchRoutes } from "./routes/logs/batch.js";
import { logTypeRoutes } from "./routes/logs/log-types.js";
import { stateRoutes } from "./routes/state/index.js";
import { deadLetterRoutes } from "./routes/dead-letters.js";

export interface AppOptions {
  /** Pino options; false silences logs (tests). */
  logger?: boolean | { level: string };
}

/** Builds the HTTP app without listening, so tests drive it with inject() or a real socket. */
export async function buildApp(services: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: opts.logger ?? { level: services.config.logLevel },
    bodyLimit: services.config.maxBodyBytes,
    // Keep-alive clients (SDKs, gateways) reuse sockets across batches.
    keepAliveTimeout: 65_000,
    // Bodies are plain data: JSON.parse alone, without the prototype-poisoning scan
    // (nothing here merges request objects into prototypes; payloads are copied as data).
    onProtoPoisoning: "ignore",
    onConstructorPoisoning: "ignore",
  }).withTypeProvider<TypeBoxTypeProvider>();

  installErrorHandler(app);
  app.addSchema(ErrorBodySchema);
  app.addSchema(PatientSchema);
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
  await app.register(authPlugin, { services });

  await app.register(healthRoutes, { services });
  await app.register(authRoutes, { services });
  await app.register(organizationRoutes, { services });
  await app.register(patientRoutes, { services });
  await app.register(logBatchRoutes, { services });
  await app.register(logTypeRoutes, { services });
  await app.register(stateRoutes, { services });
  await app.register(deadLetterRoutes, { services });

  app.get("/openapi.json", { config: { scope: false }, schema: { hide: true } }, async () => app.swagger());
  return app;
}
