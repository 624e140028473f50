import type { JsonKv } from "../../infra/nats/json-kv.js";

export interface Organization {
  id: string;
  name: string;
  default_project_id: string;
  created_at: string;
}

export class OrganizationStore {
  constructor(private readonly kv: JsonKv<Organization>) {}

  async get(id: string): Promise<Organization | null> {
    return (await this.kv.get(id))?.value ?? null;
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
