import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError, fieldIssue } from "../../../src/errors.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";
import { instantParam } from "./state/schemas.js";
import { QueryParams } from "../query-params.js";

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
  patient_ids: Type.Array(Type.String(), { description: "Every patient the request named (log batches, cohort queries), each once" }),
  patient_ids_omitted: Type.Optional(Type.Integer({ description: "Names the request gave that patient_ids does not list (not patient ids, or past the entry's size bound)" })),
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
        querystring: QueryParams({
          since: Type.Optional(Type.String({ description: "Entries at or after this time: ISO 8601 datetime with offset, or a date (UTC midnight)" })),
          until: Type.Optional(Type.String({ description: "Entries at or before this time: ISO 8601 datetime with offset, or a date (UTC midnight)" })),
          patient_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only entries naming this patient" })),
          project_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only entries of this project (id)" })),
          key_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Only entries of this API key (JWTs and patient tokens count as their parent key)" })),
          route: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Only entries of this route pattern, as entries name it (e.g. /v1/projects/:id)" })),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
          cursor: Type.Optional(Type.String({ description: "next_cursor of the previous page" })),
        }),
        response: responses({ 200: Type.Object({ count: Type.Integer(), entries: Type.Array(AuditEntrySchema), next_cursor: Nullable(Type.String()) }) }),
      },
    },
    async (req) => {
      const { patient_id, project_id, key_id, route, limit } = req.query;
      // Read as /logs reads them (a leap second refused as there).
      const since = instantParam(req.query.since, "since");
      const until = instantParam(req.query.until, "until");
      const cursor = cursorParam(req.query.cursor);
      if (since !== undefined && until !== undefined && since > until) {
        throw new AppError("validation", "since is after until", [fieldIssue(["query", "since"], "must not be after until", req.query.since)]);
      }
      const page = await s.audit.read(req.principal.organization_id, {
        limit,
        ...(since !== undefined ? { since } : {}),
        ...(until !== undefined ? { until } : {}),
        ...(patient_id !== undefined ? { patient_id } : {}),
        ...(project_id !== undefined ? { project_id } : {}),
        ...(key_id !== undefined ? { key_id } : {}),
        ...(route !== undefined ? { route } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
      });
      return { count: page.entries.length, entries: page.entries, next_cursor: page.next_cursor };
    },
  );
};

/** A next_cursor: a stream sequence, a whole number JavaScript holds exactly (JetStream's are far below 2^53). */
function cursorParam(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d{1,16}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n)) {
    const message = "must be the next_cursor of a previous page (a whole number); leave it out to read from the start";
    throw new AppError("validation", `cursor ${message}`, [fieldIssue(["query", "cursor"], message, v)]);
  }
  return n;
}
