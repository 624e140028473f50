import { randomBytes } from "node:crypto";
import type { JsonKv } from "../../infra/nats/json-kv.js";
import { newId } from "../ids.js";
import type { Scope } from "../auth/scopes.js";
import { digest } from "./hash.js";

export interface ApiKey {
  id: string;
  organization_id: string;
  /** Null: an org-wide key. */
  project_id: string | null;
  name: string;
  scopes: Scope[];
  created_at: string;
  revoked_at: string | null;
}

/** The secret is shown once; only its SHA-256 is stored. */
export function generateSecret(): string {
  return `pss_${randomBytes(32).toString("base64url")}`;
}

/**
 * API keys by id, and an index from the secret's hash to the id. Lookups on the request
 * path hit an in-process cache that the bucket watch keeps exact (see watchKeys).
 */
export class ApiKeyStore {
  private readonly byId = new Map<string, ApiKey>();
  private readonly idByHash = new Map<string, string>();

  constructor(
    private readonly keys: JsonKv<ApiKey>,
    private readonly hashes: JsonKv<{ key_id: string }>,
  ) {}

  /** Drops a cached key after any write to it (revocation takes effect at once). */
  invalidate(id: string): void {
    this.byId.delete(id);
  }

  async get(id: string): Promise<ApiKey | null> {
    const cached = this.byId.get(id);
    if (cached) return cached;
    const k = (await this.keys.get(id))?.value ?? null;
    if (k) this.byId.set(id, k);
    return k;
  }

  async findBySecret(secret: string): Promise<ApiKey | null> {
    const h = digest("api-key", secret);
    let id = this.idByHash.get(h);
    if (id === undefined) {
      id = (await this.hashes.get(h))?.value.key_id;
      if (id === undefined) return null;
      this.idByHash.set(h, id);
    }
    return this.get(id);
  }

  /** Stores a key for `secret`; with a fixed id it is idempotent (bootstrap). */
  async create(input: Omit<ApiKey, "id" | "created_at" | "revoked_at"> & { id?: string }, secret: string): Promise<ApiKey> {
    const key: ApiKey = { ...input, id: input.id ?? newId("key"), created_at: new Date().toISOString(), revoked_at: null };
    const existing = await this.keys.get(key.id);
    if (existing) return existing.value;
    await this.hashes.put(digest("api-key", secret), { key_id: key.id });
    await this.keys.put(key.id, key);
    return key;
  }

  async list(org: string): Promise<ApiKey[]> {
    const out: ApiKey[] = [];
    for (const id of await this.keys.keys()) {
      const k = await this.get(id);
      if (k && k.organization_id === org) out.push(k);
    }
    return out;
  }

  async revoke(id: string, at: string): Promise<ApiKey | null> {
    const r = await this.keys.modify(id, (k) => (k.revoked_at ? undefined : { ...k, revoked_at: at }));
    this.invalidate(id);
    return r?.value ?? null;
  }
}
