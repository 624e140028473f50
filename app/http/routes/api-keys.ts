import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { SCOPES, type Scope } from "../../../src/auth/scopes.js";
import { generateSecret, type ApiKey } from "../../../src/control/api-keys.js";
import { BOOTSTRAP } from "../../../src/control/bootstrap.js";
import { AppError, fieldIssue, notFound } from "../../../src/errors.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";

const KeyFields = {
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  project_id: Nullable(Type.String({ description: "Null: an org-wide key, which picks a project per request with X-Project" })),
  created_at: Type.String(),
};
const KeySchema = Type.Object({ ...KeyFields, revoked_at: Nullable(Type.String()) });

const publicKey = (k: ApiKey) => ({ id: k.id, name: k.name, scopes: k.scopes, project_id: k.project_id, created_at: k.created_at, revoked_at: k.revoked_at });

/**
 * API keys of the caller's organization (contract "Tenancy and auth"): org-wide keys
 * with api:manage-projects only. The secret is in the creation answer and nowhere else;
 * the store keeps its SHA-256.
 */
export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "api:manage-projects" as const, orgWide: true };
  const tags = ["api keys"];

  app.post(
    "/v1/api-keys",
    {
      config,
      schema: {
        summary: "Create an API key (the secret is shown only in this answer); a key grants at most the scopes of its creator",
        tags,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            scopes: Type.Array(Type.String(), { minItems: 1, maxItems: SCOPES.length, uniqueItems: true, description: `Any of ${SCOPES.join(", ")}` }),
            project: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "Project id or slug: the key is bound to it. Absent: an org-wide key" })),
          },
          { additionalProperties: false },
        ),
        response: responses({ 201: Type.Object({ ...KeyFields, key: Type.String({ description: "The secret; shown only here" }) }) }),
      },
    },
    async (req, reply) => {
      const p = req.principal;
      const scopes = req.body.scopes.map((sc, i) => grantable(sc, i, p.scopes));
      let projectId: string | null = null;
      if (req.body.project !== undefined) {
        const project = await s.projects.resolve(p.organization_id, req.body.project);
        // A deprecated project answers 404 here as everywhere outside /v1/projects.
        if (!project || project.status !== "active") throw notFound("project", req.body.project);
        projectId = project.id;
      }
      const secret = generateSecret();
      const key = await s.apiKeys.create({ organization_id: p.organization_id, project_id: projectId, name: req.body.name, scopes }, secret);
      return reply.status(201).send({ id: key.id, name: key.name, scopes: key.scopes, project_id: key.project_id, created_at: key.created_at, key: secret });
    },
  );

  app.get(
    "/v1/api-keys",
    {
      config,
      schema: {
        summary: "The organization's API keys without their secrets (revoked ones show revoked_at)",
        tags,
        response: responses({ 200: Type.Object({ api_keys: Type.Array(KeySchema), total: Type.Integer() }) }),
      },
    },
    async (req) => {
      const keys = await s.apiKeys.list(req.principal.organization_id);
      return { api_keys: keys.map(publicKey), total: keys.length };
    },
  );

  app.delete(
    "/v1/api-keys/:id",
    {
      config,
      schema: {
        summary: "Revoke a key at once, with every JWT and patient token minted from it",
        tags,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: responses({ 200: KeySchema }),
      },
    },
    async (req) => {
      const org = req.principal.organization_id;
      const existing = await s.apiKeys.get(req.params.id);
      if (!existing || existing.organization_id !== org) throw notFound("API key", req.params.id);
      if (existing.id === BOOTSTRAP.key_id) {
        throw new AppError("conflict", "the bootstrap key is configured by PSS_ADMIN_KEY and cannot be revoked through the API", [
          { type: "bootstrap_key", message: "change PSS_ADMIN_KEY instead" },
        ]);
      }
      const revoked = await s.apiKeys.revoke(existing.id, new Date().toISOString());
      if (!revoked) throw notFound("API key", req.params.id);
      return publicKey(revoked);
    },
  );
};

/** A scope the creator may put on a new key: a known one, never admin:organizations, and one the creator holds. */
function grantable(scope: string, index: number, held: ReadonlySet<Scope>): Scope {
  const at = ["body", "scopes", index];
  if (scope === "admin:organizations") {
    throw new AppError("authorization", "admin:organizations belongs to the bootstrap key alone and cannot be granted", [
      { type: "scope_not_grantable", message: "admin:organizations cannot be granted", field: "scopes", location: at, input_value: scope },
    ]);
  }
  if (!(SCOPES as readonly string[]).includes(scope)) {
    throw new AppError("validation", `unknown scope ${scope}`, [fieldIssue(at, `must be one of ${SCOPES.join(", ")}`, scope)]);
  }
  if (!held.has(scope as Scope)) {
    throw new AppError("authorization", `a key may only grant scopes its creator holds; this credential lacks ${scope}`, [
      { type: "scope_not_held", message: `the creating credential lacks ${scope}`, field: "scopes", location: at, input_value: scope },
    ]);
  }
  return scope as Scope;
}
