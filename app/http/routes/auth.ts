import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { AppError, fieldIssue } from "../../../src/errors.js";
import type { Services } from "../../services.js";
import { responses } from "../schemas.js";

/**
 * Fields a caller may expect POST /auth/token to take, and where they are taken instead:
 * a JWT carries its key's lifetime, scopes and project, so asking for others must be
 * refused, never answered with a token that silently ignored them.
 */
const TAKEN_ELSEWHERE: Record<string, string> = {
  expires_in: "a JWT lives PSS_JWT_TTL_SECONDS; expires_in is taken by POST /v1/auth/token (patient tokens)",
  scopes: "a JWT carries its API key's scopes; for fewer, create a key with them (POST /v1/api-keys takes scopes)",
  project: "a JWT acts in its key's project (an org-wide key's JWT picks one per request with X-Project); POST /v1/api-keys takes project for a key bound to one",
};

/** Refuses a field TAKEN_ELSEWHERE names, saying where it is taken; the schema refuses any other unknown field. */
async function refuseFieldsTakenElsewhere(req: FastifyRequest): Promise<void> {
  const body = req.body;
  if (body === null || typeof body !== "object" || Array.isArray(body)) return;
  const field = Object.keys(TAKEN_ELSEWHERE).find((k) => Object.hasOwn(body, k));
  if (field === undefined) return;
  const message = `is not an allowed field (allowed: "api_key"): ${TAKEN_ELSEWHERE[field]}`;
  throw new AppError("validation", `request validation failed: ${field} ${message}`, [fieldIssue(["body", field], message, (body as Record<string, unknown>)[field])]);
}

export const authRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.post(
    "/auth/token",
    {
      config: { scope: false },
      preValidation: refuseFieldsTakenElsewhere,
      schema: {
        summary: "Exchange an API key for a short-lived JWT (the body takes api_key alone)",
        tags: ["auth"],
        body: Type.Object({ api_key: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
        response: responses({
          200: Type.Object({ access_token: Type.String(), token_type: Type.Literal("bearer"), expires_in: Type.Integer() }),
        }),
      },
    },
    async (req) => {
      const key = await s.apiKeys.findBySecret(req.body.api_key);
      if (!key || key.revoked_at) throw new AppError("authentication", "invalid or revoked API key");
      const ttl = s.config.jwtTtlSeconds;
      const access_token = await s.tokens.sign(
        { organization_id: key.organization_id, project_id: key.project_id, scopes: key.scopes, key_id: key.id },
        ttl,
        "access",
      );
      return { access_token, token_type: "bearer" as const, expires_in: ttl };
    },
  );

  app.get(
    "/v1/auth/me",
    {
      // Any valid credential: a client (the console) learns what its credential may do.
      config: { scope: undefined },
      schema: {
        summary: "What the calling credential is: its kind, organization, project, key and scopes",
        tags: ["auth"],
        response: responses({
          200: Type.Object({
            credential: Type.Union([Type.Literal("api_key"), Type.Literal("jwt"), Type.Literal("patient_token")]),
            organization_id: Type.String(),
            project_id: Type.String({ description: "The project this request is bound to (X-Project picks one for an org-wide key)" }),
            org_wide: Type.Boolean({ description: "true: the key may name any project of its organization with X-Project" }),
            key_id: Type.String(),
            scopes: Type.Array(Type.String()),
            patient_id: Type.Optional(Type.String({ description: "A patient token's only patient" })),
          }),
        }),
      },
    },
    async (req) => {
      const p = req.principal;
      return {
        credential: p.kind,
        organization_id: p.organization_id,
        project_id: p.project_id,
        org_wide: p.key_project_id === null,
        key_id: p.key_id,
        scopes: [...p.scopes].sort(),
        ...(p.patient_id !== undefined ? { patient_id: p.patient_id } : {}),
      };
    },
  );
};
