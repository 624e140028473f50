import { isKvConflict, type JsonKv } from "../../infra/nats/json-kv.js";
import { digest } from "./hash.js";

export interface Project {
  id: string;
  organization_id: string;
  name: string;
  slug: string;
  status: "active" | "deprecated";
  is_default: boolean;
  deprecated_at: string | null;
  created_at: string;
}

/** Projects by id, plus a slug index per organization whose create() makes slugs unique. */
export class ProjectStore {
  private readonly cache = new Map<string, Project>();

  constructor(
    private readonly projects: JsonKv<Project>,
    private readonly slugs: JsonKv<{ project_id: string }>,
  ) {}

  invalidate(id: string): void {
    this.cache.delete(id);
  }

  private slugKey(org: string, slug: string): string {
    return `${org}.${digest(slug)}`;
  }

  async get(id: string): Promise<Project | null> {
    const p = (await this.projects.get(id))?.value ?? null;
    if (p) this.cache.set(id, p);
    return p;
  }

  /** Finds a project of `org` by id or slug; null when absent or of another organization. */
  async resolve(org: string, idOrSlug: string): Promise<Project | null> {
    const byId = /^prj_[0-9A-Z]{26}$|^prj_default$/.test(idOrSlug) ? await this.get(idOrSlug) : null;
    if (byId) return byId.organization_id === org ? byId : null;
    const s = await this.slugs.get(this.slugKey(org, idOrSlug));
    if (!s) return null;
    const p = await this.get(s.value.project_id);
    return p && p.organization_id === org ? p : null;
  }

  /**
   * Active-project check on the request path. Cached, because every request asks it;
   * the bucket watch drops the entry on any change, so a deprecation applies at once.
   */
  async getActiveCached(id: string): Promise<Project | null> {
    const cached = this.cache.get(id);
    const p = cached ?? (await this.get(id));
    return p && p.status === "active" ? p : null;
  }

  /** Creates the project and claims its slug; false when the id exists already (bootstrap reruns). */
  async create(p: Project): Promise<boolean> {
    try {
      await this.slugs.create(this.slugKey(p.organization_id, p.slug), { project_id: p.id });
    } catch (err) {
      if (!isKvConflict(err)) throw err;
      const holder = await this.slugs.get(this.slugKey(p.organization_id, p.slug));
      if (holder?.value.project_id !== p.id) throw err;
    }
    try {
      await this.projects.create(p.id, p);
      return true;
    } catch (err) {
      if (isKvConflict(err)) return false;
      throw err;
    }
  }
}
