import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { SCOPES } from "../../../src/auth/scopes.js";
import { generateSecret } from "../../../src/control/api-keys.js";
import { defaultProject } from "../../../src/control/projects.js";
import { newId } from "../../../src/ids.js";
import type { Services } from "../../services.js";
import { responses } from "../schemas.js";

export const organizationRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services: s }) => {
  app.post(
    "/v1/organizations",
    {
      config: { scope: "admin:organizations" },
      schema: {
        summary: "Create an organization with its default project and first org-wide key (bootstrap key only)",
        tags: ["organizations"],
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: responses({
          201: Type.Object({
            id: Type.String(),
            name: Type.String(),
            created_at: Type.String(),
            default_project_id: Type.String(),
            api_key: Type.String({ description: "The organization's first org-wide key with every scope; shown only here" }),
          }),
        }),
      },
    },
    async (req, reply) => {
      const now = new Date().toISOString();
      const org = { id: newId("org"), name: req.body.name, default_project_id: newId("prj"), created_at: now };
      await s.orgs.create(org);
      await s.projects.create(defaultProject(org.id, org.default_project_id, now));
      const secret = generateSecret();
      await s.apiKeys.create({ organization_id: org.id, project_id: null, name: "initial org-wide key", scopes: [...SCOPES] }, secret);
      return reply.status(201).send({ ...org, api_key: secret });
    },
  );
};
