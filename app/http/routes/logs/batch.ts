import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError } from "../../../../src/errors.js";
import type { Services } from "../../../services.js";
import { Nullable, OpenObject, responses } from "../../schemas.js";

const described = (description: string) => Type.Object({}, { additionalProperties: true, description });

const Detail = Type.Object(
  {
    type: Type.String(),
    message: Type.String(),
    field: Type.Optional(Type.String()),
    location: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Integer()]))),
    input_value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

/**
 * A log as a client sends it, published as a named schema for the OpenAPI document and
 * the client's types. The route does not apply it: each log is checked on its own
 * (src/logs/envelope.ts), so a bad log is that log's error rather than the batch's.
 */
export const LogInputSchema = Type.Object(
  {
    log_type: Type.String({ description: "A catalog log type (GET /v1/log-types) or a legacy alias" }),
    patient_id: Type.String(),
    timestamp: Type.Optional(
      Nullable(Type.String(), { description: "ISO 8601 with an offset, e.g. 2026-03-01T10:00:00Z; left out (or null), the time the service accepts the log" }),
    ),
    payload: described("The log type's payload, as its JSON Schema in GET /v1/log-types says"),
    idempotency_key: Type.Optional(Type.String({ description: "Deduplicates within the project, forever" })),
    log_id: Type.Optional(Type.String({ description: "The sender's own id of the log: without an idempotency key, a re-send of it the same or the next day is a duplicate" })),
    trace: Type.Optional(Type.Union([Type.String(), Type.Object({ object_type: Type.String(), object_id: Type.String() })])),
    metadata: Type.Optional(OpenObject),
    context: Type.Optional(described("Which client sent the log; kept in the log's metadata as context")),
  },
  { $id: "LogInput" },
);

export const BatchAnswerSchema = Type.Object({
  accepted: Type.Integer(),
  failed: Type.Integer(),
  duplicates: Type.Integer(),
  errors: Type.Array(Type.Object({ index: Type.Integer(), code: Type.String(), message: Type.String(), details: Type.Array(Detail) })),
  results: Type.Array(
    Type.Object({
      index: Type.Integer(),
      id: Type.Union([Type.String(), Type.Null()], { description: "The stored log's id; for a duplicate, the id of the log first stored with that key" }),
      status: Type.Union([Type.Literal("accepted"), Type.Literal("duplicate"), Type.Literal("failed")]),
    }),
  ),
});

export const logBatchRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.post(
    "/v1/logs/batch",
    {
      // Each log's strings are checked with the log (src/logs/envelope.ts): a bad one is that log's error.
      config: { scope: "sdk:event-log", textCheckedPerItem: "logs" },
      bodyLimit: Math.max(s.config.maxBodyBytes, s.config.maxBatchBodyBytes),
      schema: {
        summary: "Submit typed logs; each is validated on its own, the answer comes once accepted logs are durable",
        tags: ["logs"],
        body: Type.Object({
          logs: Type.Array(Type.Unknown({
            description: "A log as the LogInput schema states it (write_back is taken and ignored), checked on its own: an invalid log is that log's error",
          }), {
            maxItems: s.config.maxBatchLogs,
          }),
          atomic: Type.Optional(Type.Boolean({ default: false, description: "true: any invalid log rejects the whole batch (422) and nothing is written" })),
        }, {
          // Closed: a misspelt `atomic` would otherwise store the valid logs of a batch meant to be all or nothing.
          additionalProperties: false,
        }),
        response: responses({ 200: BatchAnswerSchema }),
      },
    },
    async (req) => {
      const { organization_id, project_id, patient_id } = req.principal;
      const answer = await s.logWriter.writeBatch(
        { organization_id, project_id, ...(patient_id !== undefined ? { only_patient_id: patient_id } : {}) },
        req.body.logs,
        { source: "batch", atomic: req.body.atomic === true, at: ["body", "logs"] },
      );
      const storageFailures = answer.errors.filter((e) => e.code === "storage_error").length;
      if (storageFailures > 0 && answer.accepted === 0 && answer.duplicates === 0) {
        // Nothing is known stored and the cause is ours: a 5xx tells clients to retry. A publish
        // whose acknowledgement timed out may still have landed, so the answer says so.
        throw new AppError("unavailable", "log storage did not confirm the batch; retry it with the same idempotency keys (a log that was stored then answers duplicate)", [
          { type: "storage_error", message: answer.errors[0]!.message },
        ]);
      }
      return answer;
    },
  );
};
