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
};
