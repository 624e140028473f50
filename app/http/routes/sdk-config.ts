import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../../services.js";
import { responses } from "../schemas.js";

/**
 * The limits a client checks before it sends (the hosted product's SDKs read this at
 * start and refuse an upload over the file cap locally). The values are this process's
 * configuration, so a client never refuses what the service would take.
 */
export const sdkConfigRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const answer = {
    ingestion_max_file_bytes: s.config.maxUploadBytes,
    // No signals here: the cap a synchronous JSON body meets is the request body limit.
    signals_max_sync_body_bytes: s.config.maxBodyBytes,
    max_request_body_bytes: s.config.maxBodyBytes,
    logs_batch_max_body_bytes: Math.max(s.config.maxBodyBytes, s.config.maxBatchBodyBytes),
    logs_batch_max_logs: s.config.maxBatchLogs,
  };
  app.get(
    "/v1/sdk/config",
    {
      config: { scope: undefined },
      schema: {
        summary: "Limits a client checks before sending: upload and body sizes, logs per batch (any credential)",
        tags: ["sdk"],
        response: responses({
          200: Type.Object({
            ingestion_max_file_bytes: Type.Integer({ description: "Largest JSONL file an ingestion upload takes (PSS_MAX_UPLOAD_BYTES)" }),
            signals_max_sync_body_bytes: Type.Integer({ description: "Largest JSON request body (PSS_MAX_BODY_BYTES); this service has no signals routes" }),
            max_request_body_bytes: Type.Integer({ description: "Largest JSON request body (PSS_MAX_BODY_BYTES)" }),
            logs_batch_max_body_bytes: Type.Integer({ description: "Largest POST /v1/logs/batch body (PSS_MAX_BATCH_BODY_BYTES)" }),
            logs_batch_max_logs: Type.Integer({ description: "Most logs in one POST /v1/logs/batch (PSS_MAX_BATCH_LOGS)" }),
          }),
        }),
      },
    },
    async () => answer,
  );
};
