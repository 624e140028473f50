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
  /** SHA-256 of the secret (its index entry's key); never the secret itself. Not served. */
  secret_hash?: string;
  revoked_at: string | null;
}

/**
 * What a key id can be (`key_` and a ULID, or the bootstrap key's `key_admin`). Anything
 * else is no key, and would not be a valid KV key either (`..`, NUL, CR LF, non-ASCII).
 */
const KEY_ID = /^key_[0-9A-Za-z]{1,60}$/;

/** The secret is shown once; only its SHA-256 is stored. */
export function generateSecret(): string {
  return `pss_${randomBytes(32).toString("base64url")}`;
}

/** A cached key with the KV revision it was read at; `value: null` is a deletion. */
interface Cached {
  value: ApiKey | null;
  revision: number;
}

/**
 * API keys by id, and an index from the secret's hash to the id. Lookups on the request
 * path hit an in-process cache that the bucket watch keeps exact (see refresh).
 */
export class ApiKeyStore {
  private readonly byId = new Map<string, Cached>();
  private readonly idByHash = new Map<string, string>();

  constructor(
    private readonly keys: JsonKv<ApiKey>,
    private readonly hashes: JsonKv<{ key_id: string }>,
  ) {}

  /** Drops a cached key (the next read goes to the bucket). */
  invalidate(id: string): void {
    this.byId.delete(id);
  }

  /**
   * Takes a value seen on the bucket watch (null: deleted). A revision never goes back,
   * so a read that started before a revocation and finishes after it cannot put the
   * live key back into the cache: revocation holds on every instance at once.
   */
  refresh(id: string, value: ApiKey | null, revision: number): void {
    const cur = this.byId.get(id);
    if (!cur || cur.revision < revision) this.byId.set(id, { value, revision });
  }

  async get(id: string): Promise<ApiKey | null> {
    if (!KEY_ID.test(id)) return null;
    const cached = this.byId.get(id);
    if (cached) return cached.value;
    const k = await this.keys.get(id);
    if (k) this.refresh(id, k.value, k.revision);
    return k?.value ?? null;
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

  /**
   * Points a fixed key (the bootstrap key) at `secret`: after PSS_ADMIN_KEY changes, the
   * new value works and the old one stops, across restarts. The record keeps only the
   * secret's hash, which is what lets the old mapping be found and removed.
   */
  async rotateSecret(id: string, secret: string): Promise<void> {
    const h = digest("api-key", secret);
    const cur = await this.keys.get(id);
    if (!cur || cur.value.secret_hash === h) return;
    await this.hashes.put(h, { key_id: id });
    const old = cur.value.secret_hash;
    const updated = await this.keys.modify(id, (k) => ({ ...k, secret_hash: h }));
    if (updated) this.refresh(id, updated.value, updated.revision);
    if (old !== undefined && old !== h) {
      await this.hashes.delete(old);
      this.idByHash.delete(old);
    }
  }

  /** Stores a key for `secret`; with a fixed id it is idempotent (bootstrap). */
  async create(input: Omit<ApiKey, "id" | "created_at" | "revoked_at"> & { id?: string }, secret: string): Promise<ApiKey> {
    const secret_hash = digest("api-key", secret);
    const key: ApiKey = { ...input, id: input.id ?? newId("key"), created_at: new Date().toISOString(), revoked_at: null, secret_hash };
    const existing = await this.keys.get(key.id);
    if (existing) return existing.value;
    await this.hashes.put(secret_hash, { key_id: key.id });
    this.refresh(key.id, key, await this.keys.put(key.id, key));
    return key;
  }

  /** The organization's keys (revoked ones too), oldest first. */
  async list(org: string): Promise<ApiKey[]> {
    const out: ApiKey[] = [];
    for (const id of await this.keys.keys()) {
      const k = await this.get(id);
      if (k && k.organization_id === org) out.push(k);
    }
    return out.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }

  /** Revokes the key (a second revocation keeps the first time); null when absent. */
  async revoke(id: string, at: string): Promise<ApiKey | null> {
    const r = await this.keys.modify(id, (k) => (k.revoked_at ? undefined : { ...k, revoked_at: at }));
    if (r) this.refresh(id, r.value, r.revision);
    return r?.value ?? null;
  }
}
