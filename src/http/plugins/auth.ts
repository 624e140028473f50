import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../errors.js";
import type { Principal, Scope } from "../../auth/scopes.js";
import type { Services } from "../../services.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The scope a route needs; `false` marks a route that takes no bearer credential. */
    scope?: Scope | false;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

const PROJECT_HEADERS = ["x-project", "x-olira-project"] as const;

function bearer(req: FastifyRequest): string {
  const h = req.headers.authorization;
  if (!h) throw new AppError("authentication", "missing Authorization header: send Authorization: Bearer <api key or token>");
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  if (!m) throw new AppError("authentication", "Authorization header must be: Bearer <api key or token>");
  return m[1]!;
}

/**
 * Resolves the bearer credential into a Principal (organization, project, scopes) and
 * enforces the route's scope. Unknown or revoked credentials are 401, missing scope is
 * 403, and a project the caller cannot see is 404 so that existence never leaks.
 */
async function resolvePrincipal(s: Services, req: FastifyRequest): Promise<Principal> {
  const token = bearer(req);
  let base: Omit<Principal, "project_id">;
  // A JWT has three dot-separated parts; anything else is an opaque API key (the
  // bootstrap key is whatever PSS_ADMIN_KEY says, so no prefix can be assumed).
  if (token.split(".").length !== 3) {
    const key = await s.apiKeys.findBySecret(token);
    if (!key || key.revoked_at) throw new AppError("authentication", "invalid or revoked API key");
    base = { kind: "api_key", organization_id: key.organization_id, key_project_id: key.project_id, key_id: key.id, scopes: new Set(key.scopes) };
  } else {
    const claims = await s.tokens.verify(token);
    if (!claims) throw new AppError("authentication", "invalid or expired token");
    const parent = await s.apiKeys.get(claims.key_id);
    if (!parent || parent.revoked_at) throw new AppError("authentication", "the API key this token was issued from has been revoked");
    // A token never holds more than its key holds now.
    const scopes = new Set(claims.scopes.filter((sc) => parent.scopes.includes(sc)));
    base = {
      kind: claims.kind === "patient" ? "patient_token" : "jwt",
      organization_id: claims.organization_id,
      key_project_id: claims.project_id,
      key_id: claims.key_id,
      scopes,
      ...(claims.patient_id !== undefined ? { patient_id: claims.patient_id } : {}),
    };
  }
  const project_id = await resolveProject(s, req, base);
  return { ...base, project_id };
}

async function resolveProject(s: Services, req: FastifyRequest, base: Omit<Principal, "project_id">): Promise<string> {
  let projectId = base.key_project_id;
  if (projectId === null) {
    const header = PROJECT_HEADERS.map((h) => req.headers[h]).find((v) => typeof v === "string" && v !== "") as string | undefined;
    if (header !== undefined) {
      const p = await s.projects.resolve(base.organization_id, header);
      if (!p) throw new AppError("not_found", `project ${header} not found`);
      projectId = p.id;
    } else {
      const org = await s.orgs.get(base.organization_id);
      if (!org) throw new AppError("authentication", "the organization of this credential no longer exists");
      projectId = org.default_project_id;
    }
  }
  const project = await s.projects.getActiveCached(projectId);
  if (!project || project.organization_id !== base.organization_id) throw new AppError("not_found", `project ${projectId} not found`);
  return projectId;
}

export const authPlugin = fp(
  async (app: FastifyInstance, opts: { services: Services }) => {
    app.decorateRequest("principal", null as unknown as Principal);
    app.addHook("onRequest", async (req) => {
      const scope = req.routeOptions.config?.scope;
      if (scope === false || req.routeOptions.url === undefined) return;
      req.principal = await resolvePrincipal(opts.services, req);
      if (scope !== undefined && !req.principal.scopes.has(scope)) {
        throw new AppError("authorization", `this credential lacks the scope ${scope}`, [
          { type: "missing_scope", message: `required scope: ${scope}`, required_scope: scope },
        ]);
      }
    });
  },
  { name: "auth" },
);
