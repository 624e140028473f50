import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError } from "../../../../src/errors.js";
import type { Services } from "../../../services.js";
import { responses } from "../../schemas.js";

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
            description:
              "A log: log_type, patient_id, payload, timestamp? (absent or null: the acceptance time, as ingested_at), idempotency_key?, trace?, metadata?, " +
              "log_id? (the sender's id: without an idempotency key, a re-send the same or the next day is a duplicate), context? (kept in metadata), write_back? (ignored)",
          }), {
            maxItems: s.config.maxBatchLogs,
          }),
          atomic: Type.Optional(Type.Boolean({ default: false, description: "true: any invalid log rejects the whole batch (422) and nothing is written" })),
        }),
        response: responses({ 200: BatchAnswerSchema }),
      },
    },
    async (req) => {
      const { organization_id, project_id, patient_id } = req.principal;
      const answer = await s.logWriter.writeBatch(
        { organization_id, project_id, ...(patient_id !== undefined ? { only_patient_id: patient_id } : {}) },
        req.body.logs,
        { atomic: req.body.atomic === true, at: ["body", "logs"] },
      );
      const storageFailures = answer.errors.filter((e) => e.code === "storage_error").length;
      if (storageFailures > 0 && answer.accepted === 0 && answer.duplicates === 0) {
        // Nothing was stored and the cause is ours: a 5xx tells clients to retry the batch.
        throw new AppError("unavailable", "log storage is unavailable; nothing was stored, retry the batch", [
          { type: "storage_error", message: answer.errors[0]!.message },
        ]);
      }
      return answer;
    },
  );
};
