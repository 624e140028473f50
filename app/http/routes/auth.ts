import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError } from "../../../src/errors.js";
import type { Services } from "../../services.js";
import { responses } from "../schemas.js";

export const authRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.post(
    "/auth/token",
    {
      config: { scope: false },
      schema: {
        summary: "Exchange an API key for a short-lived JWT",
        tags: ["auth"],
        body: Type.Object({ api_key: Type.String({ minLength: 1 }) }),
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
