import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { AppError, notFound } from "../../errors.js";
import { newId } from "../../ids.js";
import { slugFromName, SLUG_PATTERN, type Project } from "../../control/projects.js";
import type { Services } from "../../services.js";
import { Nullable, responses } from "../schemas.js";

export const ProjectSchema = Type.Object({
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  slug: Type.String({ description: "Usable in place of the id (paths, X-Project)" }),
  status: Type.Union([Type.Literal("active"), Type.Literal("deprecated")]),
  is_default: Type.Boolean({ description: "The default project cannot be deprecated" }),
  deprecated_at: Nullable(Type.String()),
  created_at: Type.String(),
});

const Slug = Type.String({ pattern: SLUG_PATTERN, description: "Lowercase letters, digits and dashes, at most 63" });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: "Project id or slug" }) });

const publicProject = (p: Project): Project => ({ ...p });

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

  app.post(
    "/v1/projects",
    {
      config,
      schema: {
        summary: "Create a project (slug from the name when absent; 409 when the organization has that slug)",
        tags,
        body: Type.Object({ name: Name, slug: Type.Optional(Slug) }, { additionalProperties: false }),
        response: responses({ 201: ProjectSchema }),
      },
    },
    async (req, reply) => {
      const p: Project = {
        id: newId("prj"),
        organization_id: req.principal.organization_id,
        name: req.body.name,
        slug: req.body.slug ?? slugFromName(req.body.name),
        status: "active",
        is_default: false,
        deprecated_at: null,
        created_at: new Date().toISOString(),
      };
      await s.projects.create(p);
      return reply.status(201).send(publicProject(p));
    },
  );

  app.get(
    "/v1/projects",
    {
      config,
      schema: {
        summary: "The organization's projects, deprecated ones included (oldest first)",
        tags,
        querystring: Type.Object({ status: Type.Optional(Type.Union([Type.Literal("active"), Type.Literal("deprecated")])) }),
        response: responses({ 200: Type.Object({ projects: Type.Array(ProjectSchema), total: Type.Integer() }) }),
      },
    },
    async (req) => {
      const all = await s.projects.list(req.principal.organization_id);
      const projects = req.query.status ? all.filter((p) => p.status === req.query.status) : all;
      return { projects: projects.map(publicProject), total: projects.length };
    },
  );

  app.get(
    "/v1/projects/:id",
    { config, schema: { summary: "One project by id or slug (deprecated ones too)", tags, params: IdParams, response: responses({ 200: ProjectSchema }) } },
    async (req) => publicProject(await load(req.principal.organization_id, req.params.id)),
  );

  app.put(
    "/v1/projects/:id",
    {
      config,
      schema: {
        summary: "Rename a project or change its slug (409 when the slug is taken)",
        tags,
        params: IdParams,
        body: Type.Object({ name: Type.Optional(Name), slug: Type.Optional(Slug) }, { additionalProperties: false }),
        response: responses({ 200: ProjectSchema }),
      },
    },
    async (req) => {
      const p = await load(req.principal.organization_id, req.params.id);
      return publicProject(await s.projects.update(p, req.body));
    },
  );

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
      const done = await s.projects.modify(p.id, (cur) => (cur.status === "active" ? undefined : { ...cur, status: "active", deprecated_at: null }));
      if (!done) throw notFound("project", req.params.id);
      return publicProject(done);
    },
  );
};

function conflict(message: string, type: string): AppError {
  return new AppError("conflict", message, [{ type, message }]);
}
