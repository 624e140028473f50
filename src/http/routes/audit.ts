import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError } from "../../errors.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";

const AuditEntrySchema = Type.Object({
  id: Type.String({ description: "Position in the trail; also a cursor" }),
  at: Type.String(),
  organization_id: Type.String(),
  project_id: Type.String(),
  key_id: Type.String({ description: "The API key behind the credential (for JWTs and patient tokens, their parent key)" }),
  credential: Type.Union([Type.Literal("api_key"), Type.Literal("jwt"), Type.Literal("patient_token")]),
  method: Type.String(),
  route: Type.String({ description: "Route pattern, e.g. /v1/state/:pid/stable" }),
  tool: Nullable(Type.String({ description: "MCP: the JSON-RPC method and tool or prompt name" })),
  patient_id: Nullable(Type.String()),
  patient_ids: Type.Array(Type.String(), { description: "Every patient the request named (log batches, cohort queries)" }),
  status: Type.Integer(),
  request_id: Type.String(),
});

/** The audit trail of the caller's organization: org-wide keys with api:manage-projects. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.get(
    "/v1/audit",
    {
      config: { scope: "api:manage-projects", orgWide: true },
      schema: {
        summary: "Who read or wrote what: every patient-data read and every write of the organization, oldest first",
        tags: ["audit"],
        querystring: Type.Object({
          since: Type.Optional(Type.String({ format: "date-time", description: "Entries at or after this time" })),
          until: Type.Optional(Type.String({ format: "date-time", description: "Entries at or before this time" })),
          patient_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only entries naming this patient" })),
          project_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only entries of this project (id)" })),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          cursor: Type.Optional(Type.String({ pattern: "^\\d+$", description: "next_cursor of the previous page" })),
        }),
        response: responses({ 200: Type.Object({ count: Type.Integer(), entries: Type.Array(AuditEntrySchema), next_cursor: Nullable(Type.String()) }) }),
      },
    },
    async (req) => {
      const { since, until, patient_id, project_id, limit, cursor } = req.query;
      if (since !== undefined && until !== undefined && Date.parse(since) > Date.parse(until)) {
        throw new AppError("validation", "since is after until", [{ type: "value_error", message: "since must not be after until", field: "since", location: ["query", "since"], input_value: since }]);
      }
      const page = await s.audit.read(req.principal.organization_id, {
        limit,
        ...(since !== undefined ? { since } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(patient_id !== undefined ? { patient_id } : {}),
        ...(project_id !== undefined ? { project_id } : {}),
        ...(cursor !== undefined ? { cursor: Number(cursor) } : {}),
      });
      return { count: page.entries.length, entries: page.entries, next_cursor: page.next_cursor };
    },
  );
};
