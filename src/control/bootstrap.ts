import { ALL_SCOPES } from "../auth/scopes.js";
import type { ApiKeyStore } from "./api-keys.js";
import type { OrganizationStore } from "./organizations.js";
import { defaultProject, type ProjectStore } from "./projects.js";

export const BOOTSTRAP = { organization_id: "org_default", project_id: "prj_default", key_id: "key_admin" } as const;

/**
 * With PSS_ADMIN_KEY set: organization `default`, its default project (slug `default`)
 * and an org-wide key equal to PSS_ADMIN_KEY holding every scope. Fixed ids make it
 * idempotent, and safe when several instances start at once.
 */
export async function bootstrapAdmin(s: { orgs: OrganizationStore; projects: ProjectStore; apiKeys: ApiKeyStore }, adminKey: string): Promise<void> {
  const now = new Date().toISOString();
  await s.orgs.create({ id: BOOTSTRAP.organization_id, name: "default", default_project_id: BOOTSTRAP.project_id, created_at: now });
  await s.projects.create(defaultProject(BOOTSTRAP.organization_id, BOOTSTRAP.project_id, now));
  await s.apiKeys.create(
    { id: BOOTSTRAP.key_id, organization_id: BOOTSTRAP.organization_id, project_id: null, name: "bootstrap admin", scopes: [...ALL_SCOPES] },
    adminKey,
  );
  // A changed PSS_ADMIN_KEY replaces the old one.
  await s.apiKeys.rotateSecret(BOOTSTRAP.key_id, adminKey);
}
