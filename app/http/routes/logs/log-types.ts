import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type, type TSchema } from "@sinclair/typebox";
import { listLogTypes, logTypeInfo, resolveLogType, type LogGroup, type LogTypeInfo } from "../../../../catalog/index.js";
import { LOG_TYPE_DESCRIPTIONS, displayName } from "../../../../catalog/descriptions.js";
import { EVENT_MODULES } from "../../../../readmodels/module.js";
import { routeLog } from "../../../../readmodels/routing.js";
import { notFound } from "../../../../src/errors.js";
import type { Services } from "../../../services.js";
import { OpenObject, responses } from "../../schemas.js";

const LogTypeSchema = Type.Object({
  log_type: Type.String({ description: "The canonical name; logs are stored and answered under it" }),
  group: Type.String(),
  lifecycle_tracked: Type.Boolean(),
  aliases: Type.Array(Type.String(), { description: "Legacy names accepted wherever a type name is read" }),
  schema: OpenObject,
  subtype: Type.String({ description: "The same as log_type (the hosted product's name for it)" }),
  category: Type.String({ description: "The same as group" }),
  display_name: Type.String(),
  description: Type.String(),
  payload_schema: OpenObject,
  payload_description: Type.String({ description: "The payload's top-level fields, `[]` marking lists" }),
  sources: Type.Array(Type.String(), { description: "How logs of the type arrive: always logged by a client here" }),
  version: Type.Integer({ description: "Version of the payload schema" }),
  target_modules: Type.Array(Type.String(), { description: "The state modules a log of this type updates, as `stable:<key>` or `event_state:<key>`" }),
  user_facing: Type.Boolean({ description: "The patient is the source: their own reports, answers, conversations and use of an app" }),
});

/** Groups whose logs the patient gives (reports, answers, conversations, app use); the rest come from clinical systems and devices. */
const PATIENT_SOURCED: ReadonlySet<LogGroup> = new Set<LogGroup>(["symptom", "engagement", "conversation", "questionnaire"]);

/** "instrument (required), symptoms[] (required), recall_period_days": read off the schema, so it never drifts from it. */
function payloadDescription(schema: TSchema): string {
  const properties = (schema.properties ?? {}) as Record<string, TSchema>;
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties)
    .map(([key, s]) => `${key}${s.type === "array" ? "[]" : ""}${required.has(key) ? " (required)" : ""}`)
    .join(", ");
}

function published(info: LogTypeInfo) {
  // A plain JSON copy: TypeBox marks schemas with symbols the serializer must not see.
  const schema = JSON.parse(JSON.stringify(info.schema)) as Record<string, unknown>;
  return {
    log_type: info.log_type,
    group: info.group,
    lifecycle_tracked: info.lifecycle_tracked,
    aliases: info.aliases,
    schema,
    subtype: info.log_type,
    category: info.group,
    display_name: displayName(info.log_type),
    description: LOG_TYPE_DESCRIPTIONS[info.log_type],
    payload_schema: schema,
    payload_description: payloadDescription(info.schema),
    sources: ["logged"],
    version: 1,
    target_modules: routeLog(info.log_type).map((k) => `${(EVENT_MODULES as readonly string[]).includes(k) ? "event_state" : "stable"}:${k}`),
    user_facing: PATIENT_SOURCED.has(info.group) || info.log_type === "medication_adherence",
  };
}

export const logTypeRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app) => {
  const all = listLogTypes().map(published);
  app.get(
    "/v1/log-types",
    {
      config: { scope: undefined },
      schema: {
        summary: "The log-type catalog with each payload's JSON Schema (`data` and `log_types` hold the same list)",
        tags: ["logs"],
        response: responses({ 200: Type.Object({ log_types: Type.Array(LogTypeSchema), data: Type.Array(LogTypeSchema) }) }),
      },
    },
    async () => ({ log_types: all, data: all }),
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
