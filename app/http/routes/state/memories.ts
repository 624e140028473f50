import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../../../services.js";
import { collectMemories } from "../../../../src/state/memories.js";
import { patientLogs } from "../../../../src/state/log-reader.js";
import { moduleEntry } from "../../../../readmodels/patient-state.js";
import { OpenObject, responses } from "../../schemas.js";
import { markFreshness } from "./index.js";
import { PatientParams } from "./schemas.js";
import { QueryParams } from "../../query-params.js";

const MemorySchema = Type.Object({
  memory_id: Type.String({ description: "Id of the log behind it: the memory_report, or the conversation it summarises" }),
  content: Type.String(),
  metadata: OpenObject,
  created_at: Type.String({ description: "Event time of that log" }),
  updated_at: Type.String({ description: "When the service accepted that log" }),
});

/** The patient's memory bank: what memory_report logs stated and what conversations came to. */
export const stateMemoryRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.get(
    "/v1/state/:pid/memories",
    {
      config: { scope: "sdk:state-read" as const },
      schema: {
        summary: "The patient's memories (memory_report logs and conversation summaries), newest first; ?query= filters by text",
        tags: ["state"],
        params: PatientParams,
        querystring: QueryParams({
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          query: Type.Optional(Type.String({ maxLength: 500, description: "Only memories whose content contains this text, any case" })),
        }),
        response: responses({ 200: Type.Object({ patient_id: Type.String(), count: Type.Integer(), results: Type.Array(MemorySchema) }) }),
      },
    },
    async (req, reply) => {
      // Waiting for the state also waits for the logs it applied: reports and summaries agree.
      const snap = await s.stateReader.snapshot(req.principal, req.params.pid, ["conversations"]);
      markFreshness(reply, snap);
      const results = await collectMemories(
        patientLogs(s.topology, req.principal, req.params.pid),
        moduleEntry(snap.stored.state, "conversations")?.payload,
        req.query,
      );
      return { patient_id: req.params.pid, count: results.length, results };
    },
  );
};
