import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError, notFound } from "../../../src/errors.js";
import { newId } from "../../../src/ids.js";
import { slugFromName, SLUG_PATTERN, type Project } from "../../../src/control/projects.js";
import { eraseProject } from "../../../src/control/project-erase.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";
import { QueryParams } from "../query-params.js";

export const ProjectSchema = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  slug: Type.String({ description: "Usable in place of the id (paths, X-Project)" }),
  description: Nullable(Type.String()),
  environment: Nullable(Type.String({ description: "A free intent tag, such as dev, staging or prod" })),
  status: Type.Union([Type.Literal("active"), Type.Literal("deprecated")]),
  is_default: Type.Boolean({ description: "The default project cannot be deprecated" }),
  deprecated_at: Nullable(Type.String()),
  created_at: Type.String(),
});

const Slug = Type.String({ pattern: SLUG_PATTERN, description: "Lowercase letters, digits and dashes, at most 63" });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000, description: "Free text, at most 2,000 characters" });
const Environment = Type.String({ maxLength: 64, description: "Free intent tag (dev, staging, prod, ...), at most 64 characters" });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "Project id or slug" }) });
/** What creating a project, or duplicating one, takes. */
const NewProject = Type.Object(
  { name: Name, slug: Type.Optional(Slug), description: Type.Optional(Nullable(Description)), environment: Type.Optional(Nullable(Environment)) },
  { additionalProperties: false },
);
/** A partial update: only the fields sent change; null clears description or environment. */
const ProjectChanges = Type.Object(
  { name: Type.Optional(Name), slug: Type.Optional(Slug), description: Type.Optional(Nullable(Description)), environment: Type.Optional(Nullable(Environment)) },
  { additionalProperties: false },
);

/** The project as served: fields absent from older records read as null, internal ones left out. */
const publicProject = ({ deleting_since: _, ...p }: Project) => ({ ...p, description: p.description ?? null, environment: p.environment ?? null });

/**
 * Projects of the caller's organization (contract "Projects"): org-wide keys with
 * api:manage-projects only. These routes see deprecated projects (to list and restore
 * them); every other route answers 404 for them through the auth plugin.
 */
export const projectRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  const config = { scope: "api:manage-projects" as const, orgWide: true };
  const tags = ["projects"];

  async function load(org: string, idOrSlug: string): Promise<Project> {
    const p = await s.projects.resolve(org, idOrSlug);
    if (!p) throw notFound("project", idOrSlug);
    return p;
  }

  /** A new active, non-default project of `org`; its slug from the name when none is sent. */
  async function create(org: string, body: { name: string; slug?: string; description?: string | null; environment?: string | null }): Promise<Project> {
    const p: Project = {
      id: newId("prj"),
      organization_id: org,
      name: body.name,
      slug: body.slug ?? slugFromName(body.name),
      description: body.description ?? null,
      environment: body.environment ?? null,
      status: "active",
      is_default: false,
      deprecated_at: null,
      created_at: new Date().toISOString(),
    };
    await s.projects.create(p);
    return p;
  }

  app.post(
    "/v1/projects",
    {
      config,
      schema: {
        summary: "Create a project (slug from the name when absent; 409 when the organization has that slug)",
        tags,
        body: NewProject,
        response: responses({ 201: ProjectSchema }),
      },
    },
    async (req, reply) => reply.status(201).send(publicProject(await create(req.principal.organization_id, req.body))),
  );

  app.post(
    "/v1/projects/:id/duplicate",
    {
      config,
      schema: {
        summary: "A new active project with the settings of this one (description, environment) and none of its data",
        description:
          "Copies settings only: never patients, logs, state, ingestion jobs or API keys. Fields sent win over the source's; the slug comes from the new name when none is sent (409 when taken).",
        tags,
        params: IdParams,
        body: NewProject,
        response: responses({ 201: ProjectSchema }),
      },
    },
    async (req, reply) => {
      const org = req.principal.organization_id;
      const source = await load(org, req.params.id);
      const copy = await create(org, {
        ...req.body,
        description: req.body.description !== undefined ? req.body.description : (source.description ?? null),
        environment: req.body.environment !== undefined ? req.body.environment : (source.environment ?? null),
      });
      return reply.status(201).send(publicProject(copy));
    },
  );

  app.get(
    "/v1/projects",
    {
      config,
      schema: {
        summary: "The organization's projects, deprecated ones included (oldest first)",
        tags,
        querystring: QueryParams({ status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("deprecated")])) }),
        response: responses({
          200: Type.Object({
            projects: Type.Array(ProjectSchema),
            data: Type.Array(ProjectSchema, { description: "The same list as projects (the name the hosted product's SDK reads)" }),
            total: Type.Integer(),
          }),
        }),
      },
    },
    async (req) => {
      const all = await s.projects.list(req.principal.organization_id);
      const projects = (req.query.status ? all.filter((p) => p.status === req.query.status) : all).map(publicProject);
      return { projects, data: projects, total: projects.length };
    },
  );

  app.get(
    "/v1/projects/:id",
    { config, schema: { summary: "One project by id or slug (deprecated ones too)", tags, params: IdParams, response: responses({ 200: ProjectSchema }) } },
    async (req) => publicProject(await load(req.principal.organization_id, req.params.id)),
  );

  // PATCH and PUT are one partial update: PUT came first, PATCH is what the SDKs send.
  for (const method of ["PATCH", "PUT"] as const) {
    app.route({
      method,
      url: "/v1/projects/:id",
      config,
      schema: {
        summary: "Change a project's name, slug, description or environment: only the fields sent (409 when the slug is taken)",
        tags,
        params: IdParams,
        body: ProjectChanges,
        response: responses({ 200: ProjectSchema }),
      },
      handler: async (req) => {
        const p = await load(req.principal.organization_id, req.params.id);
        return publicProject(await s.projects.update(p, req.body));
      },
    });
  }

  app.post(
    "/v1/projects/:id/deprecate",
    {
      config,
      schema: {
        summary: "Soft-delete a project: its data is kept but answers 404 until restored (409 for the default or last active project)",
        tags,
        params: IdParams,
        response: responses({ 200: ProjectSchema }),
      },
    },
    async (req) => {
      const org = req.principal.organization_id;
      const p = await load(org, req.params.id);
      if (p.status === "deprecated") return publicProject(p);
      if (p.is_default) throw conflict(`project ${p.slug} is the organization's default project and cannot be deprecated`, "default_project");
      // The default project is never deprecated, so an organization keeps one active
      // project even when two deprecations race past this check.
      const active = (await s.projects.list(org)).filter((x) => x.status === "active" && x.id !== p.id);
      if (active.length === 0) throw conflict(`project ${p.slug} is the organization's last active project and cannot be deprecated`, "last_active_project");
      const now = new Date().toISOString();
      const done = await s.projects.modify(p.id, (cur) => (cur.status === "deprecated" ? undefined : { ...cur, status: "deprecated", deprecated_at: now }));
      if (!done) throw notFound("project", req.params.id);
      return publicProject(done);
    },
  );

  app.post(
    "/v1/projects/:id/restore",
    {
      config,
      schema: { summary: "Bring a deprecated project back, with all its data", tags, params: IdParams, response: responses({ 200: ProjectSchema }) },
    },
    async (req) => {
      const p = await load(req.principal.organization_id, req.params.id);
      const done = await s.projects.modify(p.id, (cur) => (cur.status === "active" || cur.deleting_since !== undefined ? undefined : { ...cur, status: "active", deprecated_at: null }));
      if (!done) throw notFound("project", req.params.id);
      if (done.deleting_since !== undefined) {
        throw conflict(`project ${p.slug} is being deleted and part of its data is gone: it cannot be restored; send DELETE /v1/projects/${p.id} again to finish`, "project_being_deleted");
      }
      return publicProject(done);
    },
  );

  app.delete(
    "/v1/projects/:id",
    {
      config,
      schema: {
        summary: "Delete a deprecated project for good, with all its data (409 for an active or the default project)",
        description:
          "Erases its logs, state, query rows, patients, ingestion jobs and files, and revokes its project-bound API keys; the audit trail is kept. " +
          "An interrupted deletion (a 503) is finished by sending the DELETE again. Afterwards the project answers 404 and its slug is free.",
        tags,
        params: IdParams,
        response: responses({ 204: Type.Null({ description: "Deleted; no body" }) }),
      },
    },
    async (req, reply) => {
      const p = await load(req.principal.organization_id, req.params.id);
      if (p.is_default) throw conflict(`project ${p.slug} is the organization's default project and cannot be deleted`, "default_project");
      if (p.status !== "deprecated") {
        throw conflict(`project ${p.slug} is active: deprecate it first (POST /v1/projects/${p.id}/deprecate), then delete it`, "project_not_deprecated");
      }
      await eraseProject(s, p);
      return reply.status(204).send(null);
    },
  );
};

function conflict(message: string, type: string): AppError {
  return new AppError("conflict", message, [{ type, message }]);
}
