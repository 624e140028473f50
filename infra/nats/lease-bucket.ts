import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, JetStreamApiCodes, JetStreamApiError, StorageType } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { topologyNames } from "./topology.js";

/** @default 10_000 (10 s) */
export const DEFAULT_LEASE_TTL_MS = 10_000;

/**
 * Opens `{ns}_leases`, creating it if needed, with `history: 1` and `max_age` = `ttlMs`:
 * the server drops a member or lease key `ttlMs` after its last write, by its own clock,
 * so a lapsed lease frees itself without the machines agreeing on the time. An existing
 * bucket with another TTL or history is brought to these (nats.js opens it as it is).
 * File storage keeps the stream's sequence across a NATS restart: revisions are the
 * leases' fencing epochs and must never go back.
 */
export async function ensureLeaseBucket(nc: NatsConnection, ns: string, ttlMs = DEFAULT_LEASE_TTL_MS): Promise<KV> {
  if (!Number.isInteger(ttlMs) || ttlMs < 100) throw new RangeError(`lease TTL must be a whole number of milliseconds, at least 100 (got ${ttlMs})`);
  const bucket = topologyNames(ns).leasesBucket;
  const kv = await new Kvm(nc).create(bucket, { history: 1, ttl: ttlMs, storage: StorageType.File });
  const jsm = await jetstreamManager(nc);
  const stream = `KV_${bucket}`;
  const { config } = await jsm.streams.info(stream);
  const maxAge = ttlMs * 1_000_000;
  if (config.max_age !== maxAge || config.max_msgs_per_subject !== 1) {
    // JetStream refuses a duplicate window longer than max_age.
    await jsm.streams.update(stream, { ...config, max_age: maxAge, max_msgs_per_subject: 1, duplicate_window: Math.min(config.duplicate_window, maxAge) });
  }
  return kv;
}

/** Who a member is, as stored under `member.{id}` and renewed every TTL/3. */
export interface MemberRecord {
  id: string;
  /** The member's process role (e.g. `all`, `engine`, `api`): what it can work. */
  role: string;
  host: string;
  pid: number;
  /** ISO 8601, when the member joined. */
  started_at: string;
}

/**
 * A lease as stored under `lease.{resource}`. The create writes epoch 0, as the epoch is
 * the revision the create gets back; renewals write the epoch, so a reader of any later
 * revision knows it.
 */
export interface LeaseRecord {
  member: string;
  epoch: number;
}

export const MEMBER_PREFIX = "member.";
export const LEASE_PREFIX = "lease.";
export const memberKey = (id: string) => `${MEMBER_PREFIX}${id}`;
export const leaseKey = (resource: string) => `${LEASE_PREFIX}${resource}`;

/** Member ids and resource names: dot-separated tokens of KV-safe characters (`p.17`, `host-123-ab12`). */
const NAME = /^[-_=a-zA-Z0-9]+(\.[-_=a-zA-Z0-9]+)*$/;

/** A member id or resource name that cannot be part of a KV key. */
export class InvalidLeaseNameError extends Error {
  override name = "InvalidLeaseNameError";
  constructor(readonly what: "member id" | "resource", readonly value: string) {
    super(`${what} ${JSON.stringify(value)} must be dot-separated tokens of letters, digits, '-', '_' or '='`);
  }
}

export function checkLeaseName(what: "member id" | "resource", value: string): void {
  if (!NAME.test(value)) throw new InvalidLeaseNameError(what, value);
}

/** The bucket's TTL is not the one the member times its renewals and self-fencing by. */
export class LeaseTtlMismatchError extends Error {
  override name = "LeaseTtlMismatchError";
  constructor(readonly bucketTtlMs: number, readonly memberTtlMs: number) {
    super(`the leases bucket expires keys after ${bucketTtlMs} ms but this member counts on ${memberTtlMs} ms: every member of a namespace needs the same PSS lease TTL`);
  }
}

/** A KV operation on a member or lease key that failed or got no answer in time. */
export class LeaseOperationError extends Error {
  override name = "LeaseOperationError";
  constructor(readonly op: "create" | "renew" | "delete" | "put" | "watch", readonly key: string, options?: { cause?: unknown }) {
    super(`lease bucket: ${op} ${key} failed${options?.cause instanceof Error ? `: ${options.cause.message}` : ""}`, options);
  }
}

export const isLeaseOperationError = (err: unknown): err is LeaseOperationError => err instanceof LeaseOperationError;

/** An operation that got no answer within its time: its outcome is unknown. */
export class LeaseTimeoutError extends Error {
  override name = "LeaseTimeoutError";
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** The key was not at the expected revision: a create found it held, a renew or delete found it changed. */
export function isCasConflict(err: unknown): boolean {
  return err instanceof JetStreamApiError && (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
}

/**
 * `p`, or a LeaseTimeoutError after `ms`. A KV call waits for JetStream's own timeout
 * (5 s by default), longer than a short lease lives; the late outcome is dropped.
 */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new LeaseTimeoutError(ms)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/** The record of a watched or read entry, or null for a delete, a purge, or a value that is not such a record. */
export function parseRecord<T>(entry: { operation: string; length: number; json<V>(): V }, is: (v: unknown) => v is T): T | null {
  if (entry.operation !== "PUT" || entry.length === 0) return null;
  try {
    const v = entry.json<unknown>();
    return is(v) ? v : null;
  } catch {
    return null;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

export const isLeaseRecord = (v: unknown): v is LeaseRecord => isObject(v) && typeof v.member === "string" && typeof v.epoch === "number";

export const isMemberRecord = (v: unknown): v is MemberRecord =>
  isObject(v) && typeof v.id === "string" && typeof v.role === "string" && typeof v.host === "string" && typeof v.pid === "number" && typeof v.started_at === "string";

/**
 * The epoch of the lease on `resource` as the bucket holds it now, for processes that
 * address its holder without being members (api processes). Null when nobody holds it or
 * no member has made the bucket yet. Opens the bucket as it is, never changing it.
 */
export function leaseEpochReader(nc: NatsConnection, ns: string): (resource: string) => Promise<number | null> {
  let kv: Promise<KV> | null = null;
  return async (resource) => {
    kv ??= new Kvm(nc).open(topologyNames(ns).leasesBucket).catch((err: unknown) => {
      kv = null;
      throw err;
    });
    const entry = await (await kv).get(leaseKey(resource));
    const record = entry ? parseRecord(entry, isLeaseRecord) : null;
    return record?.epoch ?? null;
  };
}
