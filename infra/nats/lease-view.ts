import type { KvWatchEntry } from "@nats-io/kv";
import { isLeaseRecord, isMemberRecord, LEASE_PREFIX, MEMBER_PREFIX, parseRecord, type LeaseRecord, type MemberRecord } from "./lease-bucket.js";

export interface Seen<T> {
  record: T;
  revision: number;
  /** Monotonic ms when the watch last delivered a write of this key. */
  seenAt: number;
}

/** What one watched entry was about, and whether it changed who is live or who holds what. */
export type ViewUpdate = { changed: boolean; lease?: { resource: string; revision: number; record: LeaseRecord | null } };

/**
 * The leases bucket as one member's watch shows it. A key is current while the watch
 * saw it written within the TTL, by this member's clock: holders rewrite their keys every
 * TTL/3, and the server drops a key a TTL after its last write without telling watchers,
 * so a key not seen rewritten for a TTL is gone (or its writer is paused, which is the same
 * to everyone else).
 */
export class LeaseView {
  private readonly members = new Map<string, Seen<MemberRecord>>();
  private readonly leases = new Map<string, Seen<LeaseRecord>>();

  constructor(private readonly ttlMs: number) {}

  apply(e: KvWatchEntry, now: number): ViewUpdate {
    // A key seen again after it lapsed (its writer was paused) is a change too.
    const current = <T>(seen: Seen<T> | undefined): seen is Seen<T> => seen !== undefined && now - seen.seenAt < this.ttlMs;
    if (e.key.startsWith(MEMBER_PREFIX)) {
      const id = e.key.slice(MEMBER_PREFIX.length);
      const record = parseRecord(e, isMemberRecord);
      const changed = current(this.members.get(id)) !== (record !== null);
      if (record) this.members.set(id, { record, revision: e.revision, seenAt: now });
      else this.members.delete(id);
      return { changed };
    }
    if (e.key.startsWith(LEASE_PREFIX)) {
      const resource = e.key.slice(LEASE_PREFIX.length);
      const record = parseRecord(e, isLeaseRecord);
      const before = this.leases.get(resource);
      const changed = (current(before) ? before.record.member : undefined) !== record?.member;
      if (record) this.leases.set(resource, { record, revision: e.revision, seenAt: now });
      else this.leases.delete(resource);
      return { changed, lease: { resource, revision: e.revision, record } };
    }
    return { changed: false };
  }

  /** Members whose key is current, by id. */
  liveMembers(now: number): Map<string, MemberRecord> {
    const out = new Map<string, MemberRecord>();
    for (const [id, m] of this.members) if (now - m.seenAt < this.ttlMs) out.set(id, m.record);
    return out;
  }

  /** The monotonic ms at which the next current key lapses unless its writer rewrites it first. */
  nextLapse(now: number): number | undefined {
    let next: number | undefined;
    for (const seen of [...this.members.values(), ...this.leases.values()]) {
      const at = seen.seenAt + this.ttlMs;
      if (at > now && (next === undefined || at < next)) next = at;
    }
    return next;
  }

  /** The lease on `resource` if its key is current. */
  currentLease(resource: string, now: number): Seen<LeaseRecord> | undefined {
    const lease = this.leases.get(resource);
    return lease && now - lease.seenAt < this.ttlMs ? lease : undefined;
  }
}
