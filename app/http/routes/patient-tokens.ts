import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Scope } from "../../../src/auth/scopes.js";
import { AppError, notFound } from "../../../src/errors.js";
import type { Services } from "../../services.js";
import { responses } from "../schemas.js";

/** What a patient token may do at most: read that patient's state (REST and MCP) and write its logs. */
export const PATIENT_TOKEN_SCOPES: readonly Scope[] = ["mcp:patient-state", "sdk:state-read", "sdk:event-log"];

/** Default lifetime: 15 minutes. @default 900 (s) */
export const PATIENT_TOKEN_TTL_SECONDS = 900;
/** Longest lifetime a caller may ask for: 24 hours. @default 86_400 (s) */
export const PATIENT_TOKEN_MAX_TTL_SECONDS = 86_400;

/**
 * Mints patient-bound tokens (contract "Tenancy and auth"). The token is a JWT signed
 * with the parent key's id: the auth plugin checks that key on every request, so
 * revoking it revokes the token too, and the token never holds more scopes than the key
 * holds now. The token is bound to the project the patient was found in.
 */
export const patientTokenRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.post(
    "/v1/auth/token",
    {
      config: { scope: "sdk:patient-token" },
      schema: {
        summary: "Mint a patient token: a short-lived bearer credential that reads and writes only one patient",
        tags: ["auth"],
        body: Type.Object({
          patient_id: Type.String({ minLength: 1, maxLength: 64, description: "Service patient id of the caller's project" }),
          expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: PATIENT_TOKEN_MAX_TTL_SECONDS, description: "Lifetime in seconds (default 900, at most 86400)" })),
        }, { additionalProperties: false }),
        response: responses({
          200: Type.Object({
            access_token: Type.String(),
            token_type: Type.Literal("bearer"),
            expires_in: Type.Integer({ description: "Seconds until the token expires" }),
            scopes: Type.Array(Type.String()),
          }),
        }),
      },
    },
    async (req) => {
      const p = req.principal;
      if (p.kind === "patient_token") throw new AppError("authorization", "a patient token cannot mint tokens; use an API key or its JWT");
      const { patient_id } = req.body;
      if (!(await s.patients.getActive(p.project_id, patient_id))) throw notFound("patient", patient_id);
      const scopes = PATIENT_TOKEN_SCOPES.filter((sc) => p.scopes.has(sc));
      if (scopes.length === 0) {
        throw new AppError("authorization", `this credential holds none of the scopes a patient token carries (${PATIENT_TOKEN_SCOPES.join(", ")})`);
      }
      const ttl = req.body.expires_in ?? PATIENT_TOKEN_TTL_SECONDS;
      const access_token = await s.tokens.sign(
        { organization_id: p.organization_id, project_id: p.project_id, scopes, key_id: p.key_id, patient_id },
        ttl,
        "patient",
      );
      return { access_token, token_type: "bearer" as const, expires_in: ttl, scopes };
    },
  );
};
