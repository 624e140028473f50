import { Bucket, type KV, type KvEntry } from "@nats-io/kv";

export interface Versioned<T> {
  value: T;
  /** KV revision: pass it to update() for compare-and-set. */
  revision: number;
}

/** create() found the key already there, or update() found a newer revision. */
export class KvConflictError extends Error {
  override name = "KvConflictError";
  constructor(readonly key: string, options?: { cause?: unknown }) {
    super(`key ${key} changed concurrently or already exists`, options);
  }
}

export const isKvConflict = (err: unknown): err is KvConflictError => err instanceof KvConflictError;

function isCasFailure(err: unknown): boolean {
  const msg = String((err as Error)?.message ?? err);
  return msg.includes("wrong last sequence") || msg.includes("key exists");
}

/**
 * A typed JSON view of one KV bucket. Keys must be KV-safe ([-/_=.a-zA-Z0-9]); callers
 * build them from ids and hashes, never from raw user text.
 */
export class JsonKv<T> {
  constructor(readonly kv: KV) {}

  async get(key: string): Promise<Versioned<T> | null> {
    const e: KvEntry | null = await this.kv.get(key);
    if (!e || e.operation !== "PUT" || e.length === 0) return null;
    return { value: e.json<T>(), revision: e.revision };
  }

  /** Writes only if the key is absent (or deleted): the building block of every uniqueness rule. */
  async create(key: string, value: T): Promise<number> {
    try {
      return await this.kv.create(key, JSON.stringify(value));
    } catch (err) {
      if (isCasFailure(err)) throw new KvConflictError(key, { cause: err });
      throw err;
    }
  }

  /** Writes only if the key is still at `revision`. */
  async update(key: string, value: T, revision: number): Promise<number> {
    try {
      return await this.kv.update(key, JSON.stringify(value), revision);
    } catch (err) {
      if (isCasFailure(err)) throw new KvConflictError(key, { cause: err });
      throw err;
    }
  }

  async put(key: string, value: T): Promise<number> {
    return this.kv.put(key, JSON.stringify(value));
  }

  /** Deletes the key; with `revision`, only while it is still at that revision (else a KV conflict is thrown). */
  async delete(key: string, revision?: number): Promise<void> {
    await this.kv.delete(key, revision === undefined ? undefined : { previousSeq: revision });
  }

  /**
   * The keys (deleted ones included: `get` answers null for those), each once. Read from
   * the stream's subject counts in one request (paged by nats.js), not with nats.js's
   * `kv.keys()`: that reads a consumer until nothing is pending, so under steady writes (a
   * running job saves its progress every second) it can wait until its fetch times out,
   * and a key written meanwhile comes twice.
   */
  async keys(filter = ">"): Promise<string[]> {
    if (!(this.kv instanceof Bucket)) {
      const out = new Set<string>();
      for await (const k of await this.kv.keys(filter)) out.add(k);
      return [...out];
    }
    const b = this.kv;
    const info = await b.jsm.streams.info(b.stream, { subjects_filter: `${b.prefix}.${filter}` });
    return Object.keys(info.state.subjects ?? {}).map((subject) => b.decodeKey(subject.slice(b.prefix.length + 1)));
  }

  /**
   * Erases every key matching `filter` (a KV filter such as `prj_1.*`) with its history
   * and delete markers, in one stream purge: nothing of them is left to read or list.
   * Watchers are not told (a purge of the stream sends no entry), so use it only for
   * keys no cache may serve any more (those of a deleted project).
   */
  async purgeMatching(filter: string): Promise<void> {
    if (!(this.kv instanceof Bucket)) {
      for (const k of await this.keys(filter)) await this.kv.purge(k);
      return;
    }
    await this.kv.jsm.streams.purge(this.kv.stream, { filter: `${this.kv.prefix}.${filter}` });
  }

  /**
   * Read-modify-write with compare-and-set, retried on concurrent change. `change`
   * returns the new value, or undefined to leave the entry as it is.
   */
  async modify(key: string, change: (current: T) => T | undefined, attempts = 10): Promise<Versioned<T> | null> {
    for (let i = 0; i < attempts; i++) {
      const cur = await this.get(key);
      if (!cur) return null;
      const next = change(cur.value);
      if (next === undefined) return cur;
      try {
        return { value: next, revision: await this.update(key, next, cur.revision) };
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
    throw new KvConflictError(key);
  }
}
