import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { listLogTypes, logTypeInfo, resolveLogType } from "../../../catalog/index.js";
import { notFound } from "../../../errors.js";
import type { Services } from "../../../services.js";
import { OpenObject, responses } from "../../schemas.js";

const LogTypeSchema = Type.Object({
  log_type: Type.String(),
  group: Type.String(),
  lifecycle_tracked: Type.Boolean(),
  aliases: Type.Array(Type.String()),
  schema: OpenObject,
});

const published = (info: ReturnType<typeof logTypeInfo>) => ({
  log_type: info.log_type,
  group: info.group,
  lifecycle_tracked: info.lifecycle_tracked,
  aliases: info.aliases,
  // A plain JSON copy: TypeBox marks schemas with symbols the serializer must not see.
  schema: JSON.parse(JSON.stringify(info.schema)) as Record<string, unknown>,
});

export const logTypeRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app) => {
  const all = listLogTypes().map(published);
  app.get(
    "/v1/log-types",
    {
      config: { scope: undefined },
      schema: { summary: "The log-type catalog with each payload's JSON Schema", tags: ["logs"], response: responses({ 200: Type.Object({ log_types: Type.Array(LogTypeSchema) }) }) },
    },
    async () => ({ log_types: all }),
  );
  app.get(
    "/v1/log-types/:log_type",
    {
      config: { scope: undefined },
      schema: {
        summary: "One log type (canonical name or legacy alias)",
        tags: ["logs"],
        params: Type.Object({ log_type: Type.String() }),
        response: responses({ 200: LogTypeSchema }),
      },
    },
    async (req) => {
      const t = resolveLogType(req.params.log_type);
      if (!t) throw notFound("log type", req.params.log_type);
      return published(logTypeInfo(t));
    },
  );
};
