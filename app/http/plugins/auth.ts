import fp from "fastify-plugin";
import type { FastifyInstance, FastifyRequest, RouteOptions } from "fastify";
import { AppError, isAppError } from "../../../src/errors.js";
import { isScope, type Principal, type Scope } from "../../../src/auth/scopes.js";
import type { Services } from "../../services.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Every route must state this (startup fails otherwise): the scope it needs; `false`
     * for a route that takes no bearer credential; an explicit `undefined` for a route
     * any valid credential may call (the log-type catalog).
     */
    scope?: Scope | false;
    /**
     * Scopes the route needs besides `scope`: a route of one resource whose answer shows
     * what another scope guards (the ingestion preview shows stored patient state, which
     * sdk:state-read guards). Each missing one is a 403 naming it.
     */
    alsoScopes?: readonly Scope[];
    /** Only an org-wide key (or its JWT) may call it; a project-scoped one gets 403. */
    orgWide?: boolean;
  }
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyInstance {
    /** Every route with its access rule, in registration order (the authorization matrix test walks it). */
    routeRules: readonly RouteRule[];
    /** Set by the rate-limit plugin: counts a failed authentication against the caller's IP (429 when over). */
    limitFailedAuth?: (req: FastifyRequest) => Promise<void>;
  }
}

/** A route's access rule as the auth plugin enforces it. */
export interface RouteRule {
  method: string;
  url: string;
  /** false: no credential; undefined: any valid credential. */
  scope: Scope | false | undefined;
  /** Scopes needed besides `scope` (empty for most routes). */
  alsoScopes: readonly Scope[];
  orgWide: boolean;
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
  const project_id = await resolveProject(s, req, base, req.routeOptions.config?.orgWide === true);
  return { ...base, project_id };
}

/** The project names a request sends (X-Project, X-Olira-Project), non-empty ones, in that order. */
function projectHeaders(req: FastifyRequest): string[] {
  return PROJECT_HEADERS.map((h) => req.headers[h]).filter((v): v is string => typeof v === "string" && v !== "");
}

/**
 * The project a request acts in. `orgWide` routes (projects, keys) act on the whole
 * organization: a deprecated project named in X-Project must not lock a client pinned to
 * it out of restoring it (SDKs send the header on every request).
 */
async function resolveProject(s: Services, req: FastifyRequest, base: Omit<Principal, "project_id">, orgWide: boolean): Promise<string> {
  let projectId = base.key_project_id;
  if (projectId === null) {
    const header = projectHeaders(req)[0];
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
  const project = orgWide ? await s.projects.get(projectId) : await s.projects.getActiveCached(projectId);
  if (!project || project.organization_id !== base.organization_id) throw new AppError("not_found", `project ${projectId} not found`);
  // A request naming another project than the one it would be served from is refused,
  // never served from one silently: the caller expects the project it named. For a bound
  // credential that is any project but its own; for an org-wide one, X-Project and
  // X-Olira-Project naming two projects (the same one by id and slug is fine).
  const other = projectHeaders(req).find((h) => h !== project.id && h !== project.slug);
  if (other !== undefined && base.key_project_id === null) {
    throw new AppError(
      "authorization",
      `the request names two projects, ${project.slug} (${project.id}) and ${other}, in X-Project and X-Olira-Project: send one of the headers, or the same project in both`,
      [{ type: "project_mismatch", message: "X-Project and X-Olira-Project name different projects", requested_project: other, resolved_project_id: project.id }],
    );
  }
  if (base.key_project_id !== null) {
    if (other !== undefined) {
      throw new AppError(
        "authorization",
        `this credential is bound to project ${project.slug} (${project.id}) and the request names project ${other}: send no X-Project (or X-Olira-Project) header, or name that project, or use an org-wide key to act in another project`,
        [{ type: "project_mismatch", message: `credential bound to ${project.id}`, bound_project_id: project.id, requested_project: other }],
      );
    }
  }
  return projectId;
}

/**
 * Refuses, at startup, a route that states no access rule, so a route cannot be added
 * open by omission. Register the auth plugin before any route.
 */
function ruleOf(route: RouteOptions): RouteRule {
  const config = (route.config ?? {}) as { scope?: unknown; alsoScopes?: unknown; orgWide?: unknown };
  const where = `${String(route.method)} ${route.url}`;
  if (!Object.hasOwn(config, "scope")) {
    throw new Error(`route ${where} states no config.scope: give the scope it needs, or false for a route without credentials`);
  }
  const scope = config.scope;
  if (scope !== false && scope !== undefined && !(typeof scope === "string" && isScope(scope))) {
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- config.scope is typed Scope | false: another value comes only through a cast, and is named as String() writes it
    throw new Error(`route ${where} names an unknown scope ${String(scope)}`);
  }
  if (scope === false && config.orgWide === true) throw new Error(`route ${where} is orgWide but takes no credential`);
  const also = config.alsoScopes ?? [];
  if (!Array.isArray(also) || also.some((sc) => !(typeof sc === "string" && isScope(sc))) || (also.length > 0 && typeof scope !== "string")) {
    throw new Error(`route ${where} states alsoScopes that are not a list of known scopes beside a scope`);
  }
  return { method: String(route.method), url: route.url, scope: scope, alsoScopes: also as Scope[], orgWide: config.orgWide === true };
}

export const authPlugin = fp(
  async (app: FastifyInstance, opts: { services: Services }) => {
    const rules: RouteRule[] = [];
    app.decorate("routeRules", rules);
    app.addHook("onRoute", (route) => {
      rules.push(ruleOf(route));
    });
    app.decorateRequest("principal", null as unknown as Principal);
    app.addHook("onRequest", async (req) => {
      const { scope, alsoScopes = [], orgWide } = req.routeOptions.config ?? {};
      if (scope === false || req.routeOptions.url === undefined) return;
      try {
        req.principal = await resolvePrincipal(opts.services, req);
      } catch (err) {
        // Guessing credentials costs a lookup each: such callers are limited per IP.
        if (isAppError(err) && err.code === "authentication" && app.limitFailedAuth) await app.limitFailedAuth(req);
        throw err;
      }
      const missing = [...(scope !== undefined ? [scope] : []), ...alsoScopes].find((sc) => !req.principal.scopes.has(sc));
      if (missing !== undefined) {
        throw new AppError("authorization", `this credential lacks the scope ${missing}`, [
          { type: "missing_scope", message: `required scope: ${missing}`, required_scope: missing },
        ]);
      }
      if (orgWide && req.principal.key_project_id !== null) {
        throw new AppError("authorization", "this operation needs an org-wide API key (or its JWT); this credential is bound to one project", [
          { type: "org_wide_key_required", message: "use a key created without a project" },
        ]);
      }
    });
  },
  { name: "auth" },
);
