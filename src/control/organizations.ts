import type { JsonKv } from "../../infra/nats/json-kv.js";

export interface Organization {
  id: string;
  name: string;
  default_project_id: string;
  created_at: string;
}

/** Organizations by id, cached: every request of an org-wide key asks for its default project. */
export class OrganizationStore {
  private readonly cache = new Map<string, Organization>();

  constructor(private readonly kv: JsonKv<Organization>) {}

  /** Drops a cached organization after any write to it (the bucket watch calls this). */
  invalidate(id: string): void {
    this.cache.delete(id);
  }

  async get(id: string): Promise<Organization | null> {
    const cached = this.cache.get(id);
    if (cached) return cached;
    const org = (await this.kv.get(id))?.value ?? null;
    if (org) this.cache.set(id, org);
    return org;
  }

  /** Creates the organization; false when the id is already taken (bootstrap reruns). */
  async create(org: Organization): Promise<boolean> {
    try {
      await this.kv.create(org.id, org);
      return true;
    } catch (err) {
      if ((err as Error).name === "KvConflictError") return false;
      throw err;
    }
  }
}
