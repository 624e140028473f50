import { createHash, randomBytes } from "node:crypto";
import { headers } from "@nats-io/transport-node";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { ObjectInfo, ObjectStore } from "@nats-io/obj";
import type { JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import { isKvConflict, type JsonKv } from "../../infra/nats/json-kv.js";
import { digest } from "../control/hash.js";
import { AppError, notFound } from "../errors.js";
import { ulid } from "../ids.js";

/** A one-time upload URL's record; the token itself is stored only as a digest. */
export interface UploadToken {
  organization_id: string;
  project_id: string;
  s3_key: string;
  expires_at: string;
  used_at: string | null;
  /** The API key whose credential asked for the URL: revoking it makes the URL unusable. */
  key_id?: string;
}

/** How long an upload URL stays usable. @default 3_600 s (1 h) */
export const UPLOAD_URL_TTL_SECONDS = 3_600;

/** Object store chunk: fewer, larger messages than the library's 128 KiB, under max_payload. */
const CHUNK_BYTES = 256 * 1024;

/**
 * What an upload URL needs of its issuer when it is used: the URL is a credential minted
 * from a key, so it lives no longer than the key, and it writes into no project a
 * deprecation closed (as every other route answers 404 for one).
 */
export function uploadIssuerCheck(d: {
  apiKeys: { get(id: string): Promise<{ revoked_at: string | null } | null> };
  projects: { getActiveCached(id: string): Promise<unknown> };
}): (t: UploadToken) => Promise<void> {
  return async (t) => {
    if (t.key_id !== undefined) {
      const key = await d.apiKeys.get(t.key_id);
      if (!key || key.revoked_at) throw new AppError("authentication", "the API key this upload URL was issued from has been revoked; ask POST /v1/ingestion/upload-url for another with a valid key");
    }
    if (!(await d.projects.getActiveCached(t.project_id))) throw new AppError("not_found", `project ${t.project_id} not found`);
  };
}

/**
 * Ingestion files in the JetStream object store: one-time upload URLs, streaming writes
 * and streaming reads. Nothing here holds a whole file in memory, so files of gigabytes
 * cost a few chunks of RAM.
 */
export class UploadStore {
  constructor(
    private readonly deps: {
      os: ObjectStore;
      js: JetStreamClient;
      publisher: JetStreamPublisher;
      bucket: string;
      tokens: JsonKv<UploadToken>;
    },
  ) {}

  /** Upload keys carry the project, so a key of another project never resolves. */
  static isUploadOf(s3Key: string, projectId: string): boolean {
    return s3Key.startsWith(`uploads/${projectId}/`);
  }

  async issue(scope: { organization_id: string; project_id: string; key_id?: string }, now = Date.now()): Promise<{ token: string; s3_key: string; expires_in: number }> {
    const token = randomBytes(32).toString("base64url");
    const s3_key = `uploads/${scope.project_id}/upl_${ulid(now)}.jsonl`;
    const expires_at = new Date(now + UPLOAD_URL_TTL_SECONDS * 1000).toISOString();
    const { organization_id, project_id, key_id } = scope;
    await this.deps.tokens.create(digest(token), { organization_id, project_id, s3_key, expires_at, used_at: null, ...(key_id !== undefined ? { key_id } : {}) });
    return { token, s3_key, expires_in: UPLOAD_URL_TTL_SECONDS };
  }

  /**
   * Spends a token: unknown or expired → 404, already used → 409, and whatever `admit`
   * throws for the URL's issuer (checked before spending, so a URL refused for a reason
   * that can pass, such as a deprecated project restored, is not used up). Compare-and-set,
   * so two concurrent PUTs to one URL give one upload and one 409.
   */
  async spend(token: string, admit: (t: UploadToken) => Promise<void> = async () => {}): Promise<UploadToken> {
    const key = digest(token);
    const cur = await this.deps.tokens.get(key);
    if (!cur || Date.parse(cur.value.expires_at) < Date.now()) throw notFound("upload URL");
    if (cur.value.used_at !== null) throw new AppError("conflict", "this upload URL was already used; ask POST /v1/ingestion/upload-url for another");
    await admit(cur.value);
    const spent = { ...cur.value, used_at: new Date().toISOString() };
    try {
      await this.deps.tokens.update(key, spent, cur.revision);
    } catch (err) {
      if (isKvConflict(err)) throw new AppError("conflict", "this upload URL was already used; ask POST /v1/ingestion/upload-url for another");
      throw err;
    }
    return spent;
  }

  /**
   * Makes a spent URL usable again after its upload failed (the client's connection
   * dropped, the file was too large): nothing was kept, so a retry may use the same URL.
   * Only the spending that `spent` records is undone.
   */
  async release(token: string, spent: UploadToken): Promise<void> {
    const key = digest(token);
    const cur = await this.deps.tokens.get(key);
    if (!cur || cur.value.used_at !== spent.used_at) return;
    await this.deps.tokens.update(key, { ...cur.value, used_at: null }, cur.revision).catch(() => undefined);
  }

  /**
   * Streams `body` into the object `name`, in the object store's own format (chunks,
   * then a meta entry with the SHA-256 digest), so `os.info()`, `os.get()` and
   * `os.delete()` work on it. Written here rather than with `os.put()` because that one
   * hashes in JavaScript (about 50 MB/s here, most of an upload's time) and waits for
   * each chunk's ack in turn; this hashes natively and keeps a few chunks in flight. A
   * failed write leaves no chunks behind.
   */
  async write(name: string, body: AsyncIterable<Uint8Array>): Promise<{ size: number; chunks: number }> {
    const { bucket, publisher, js } = this.deps;
    const nuid = randomBytes(16).toString("base64url").replace(/[-_]/g, "x");
    const chunkSubject = `$O.${bucket}.C.${nuid}`;
    const sha = createHash("sha256");
    let size = 0;
    let chunks = 0;
    let inflight: Promise<unknown>[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const send = async (payload: Buffer) => {
      sha.update(payload);
      size += payload.length;
      chunks++;
      inflight.push(publisher.publish(chunkSubject, payload));
      if (inflight.length >= 8) {
        const wait = inflight;
        inflight = [];
        await Promise.all(wait);
      }
    };
    try {
      for await (const part of body) {
        pending.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
        pendingBytes += part.byteLength;
        while (pendingBytes >= CHUNK_BYTES) {
          const all = Buffer.concat(pending);
          await send(all.subarray(0, CHUNK_BYTES));
          pending = [all.subarray(CHUNK_BYTES)];
          pendingBytes = all.length - CHUNK_BYTES;
        }
      }
      if (pendingBytes > 0) await send(Buffer.concat(pending));
      await Promise.all(inflight);
      const digest = sha.digest("base64").replace(/\+/g, "-").replace(/\//g, "_");
      const meta = { name, description: "", options: { max_chunk_size: CHUNK_BYTES }, bucket, nuid, size, chunks, mtime: new Date().toISOString(), digest: `SHA-256=${digest}`, deleted: false };
      const h = headers();
      h.set("Nats-Rollup", "sub");
      await js.publish(`$O.${bucket}.M.${Buffer.from(name).toString("base64").replace(/\+/g, "-").replace(/\//g, "_")}`, JSON.stringify(meta), { headers: h });
      return { size, chunks };
    } catch (err) {
      await Promise.allSettled(inflight);
      await this.deps.js.jetstreamManager().then((jsm) => jsm.streams.purge(`OBJ_${bucket}`, { filter: chunkSubject })).catch(() => undefined);
      throw err;
    }
  }

  async writeText(name: string, text: string): Promise<{ size: number; chunks: number }> {
    return this.write(name, [new TextEncoder().encode(text)] as unknown as AsyncIterable<Uint8Array>);
  }

  async info(name: string): Promise<ObjectInfo | null> {
    const i = await this.deps.os.info(name);
    return i && !i.deleted ? i : null;
  }

  async delete(name: string): Promise<void> {
    await this.deps.os.delete(name).catch(() => undefined);
  }

  /**
   * Erases a project's files (uploads and inline records: their names carry the project)
   * and its upload URLs (a deleted project's project id). The object store keeps a
   * deleted file's name as a marker; its bytes go.
   */
  async eraseProject(projectId: string): Promise<void> {
    const mine = [`uploads/${projectId}/`, `inline/${projectId}/`];
    for (const o of await this.deps.os.list()) {
      if (mine.some((prefix) => o.name.startsWith(prefix))) await this.deps.os.delete(o.name);
    }
    for (const key of await this.deps.tokens.keys()) {
      const t = await this.deps.tokens.get(key);
      if (t?.value.project_id === projectId) await this.deps.tokens.delete(key);
    }
  }

  /**
   * The object's bytes, chunk by chunk, read with an ordered pull consumer that fetches
   * only as fast as the caller iterates. (The library's own `get()` pushes the whole
   * object into an unbounded stream: a slow reader of a large file would buffer all of it.)
   */
  async *read(name: string, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
    const info = await this.info(name);
    if (!info) throw notFound("upload", name);
    if (info.chunks === 0) return;
    const consumer = await this.deps.js.consumers.get(`OBJ_${this.deps.bucket}`, { filter_subjects: `$O.${this.deps.bucket}.C.${info.nuid}` });
    const iter = await consumer.consume({ max_messages: 8 });
    let seen = 0;
    let bytes = 0;
    const sha = createHash("sha256");
    try {
      for await (const m of iter) {
        if (signal?.aborted) throw signal.reason ?? new Error("aborted");
        seen++;
        bytes += m.data.length;
        sha.update(m.data);
        yield m.data;
        if (seen >= info.chunks) break;
      }
    } finally {
      iter.stop();
      await consumer.delete().catch(() => undefined);
    }
    const digest = `SHA-256=${sha.digest("base64").replace(/\+/g, "-").replace(/\//g, "_")}`;
    if (bytes !== info.size || digest !== info.digest) throw new Error(`object ${name} is corrupt: read ${bytes} of ${info.size} bytes, digest ${digest} instead of ${info.digest}`);
  }
}
