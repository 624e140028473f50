import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { QueryBodySchema } from "../../../query/index.js";
import { callerQueryScope } from "../../../src/query/log-query-service.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";
import { PatientParams } from "./state/schemas.js";

/** Both routes' answer, and query_logs' (its outputSchema derives from it). */
export const QueryAnswerSchema = Type.Object({
  count: Type.Integer(),
  rows: Type.Optional(Type.Array(Type.Unknown())),
  organization_id: Type.Optional(Type.String()),
  patient_id: Type.Optional(Nullable(Type.String())),
  total_count: Type.Optional(Nullable(Type.Integer())),
  has_more: Type.Optional(Type.Boolean()),
});

/** The log query builder over ClickHouse: organization or cohort, and one patient. */
export const queryRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "sdk:state-read" as const };
  const tags = ["query"];
  // Every key of the body is optional, so no body at all is the empty query (the newest logs).
  app.addHook("preValidation", async (req) => {
    if (req.body === undefined || req.body === null) req.body = {};
  });

  app.post(
    "/v1/state/logs/query",
    {
      config,
      schema: {
        summary: "Query logs across the organization's project, or a cohort with patient_ids",
        tags,
        body: QueryBodySchema,
        response: responses({ 200: QueryAnswerSchema }),
      },
    },
    async (req, reply) => {
      const scope = await callerQueryScope(req.principal, req.body, (p, pid) => s.stateReader.authorize(p, pid));
      const r = await s.logQuery.run(req.body, scope);
      req.auditPatients = r.patients.ids;
      req.auditPatientsOmitted = r.patients.omitted;
      if (!r.current) reply.header("x-pss-stale", "true");
      return r.answer;
    },
  );

  app.post(
    "/v1/state/:pid/logs/query",
    {
      config,
      schema: {
        summary: "Query one patient's logs",
        tags,
        params: PatientParams,
        body: QueryBodySchema,
        response: responses({ 200: QueryAnswerSchema }),
      },
    },
    async (req, reply) => {
      await s.stateReader.authorize(req.principal, req.params.pid);
      const { organization_id, project_id } = req.principal;
      const r = await s.logQuery.run(req.body, { organization_id, project_id, patient_id: req.params.pid });
      if (!r.current) reply.header("x-pss-stale", "true");
      return r.answer;
    },
  );
};
