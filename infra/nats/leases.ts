import type { KV } from "@nats-io/kv";
import { isCasConflict, isLeaseRecord, leaseKey, LeaseOperationError, LeaseTimeoutError, parseRecord, withTimeout, type LeaseRecord } from "./lease-bucket.js";

/**
 * Why a lease ended: `released` (handed over to the member preferred for it), `stopped`
 * (the member stops), `expired` (not renewed in time: this member fenced itself off),
 * `taken` (the key changed under it: a renewal's compare-and-set failed, or another
 * member's write was seen).
 */
export type LossReason = "released" | "stopped" | "expired" | "taken";

export interface HeldLease {
  resource: string;
  /** The fencing token: the KV revision of the create that won the lease. */
  epoch: number;
  /** When it was acquired, in ms since 1970 (for operators). */
  since: number;
}

export interface LeaseCallbacks {
  /** The lease is ours from `epoch` on: start working the resource. */
  onAcquired(resource: string, epoch: number): void | Promise<void>;
  /**
   * Stop working the resource now. Awaited before a voluntary release (the next owner
   * waits for it); on `expired` and `taken` the lease is already gone and the promise only
   * delays a best-effort delete. May come while `onAcquired` is still running.
   */
  onLost(resource: string, epoch: number, reason: LossReason): void | Promise<void>;
  onError(err: Error): void;
}

export interface LeaseCounters {
  acquisitions: number;
  /** Leases lost involuntarily (`expired`, `taken`). */
  losses: number;
  /** Leases given up on purpose (`released`, `stopped`). */
  releases: number;
  renewFailures: number;
}

export interface LeaseTimings {
  /** The bucket's TTL: the server drops a lease this long after its last write. */
  ttlMs: number;
  /** How long before the server could expire a lease its holder counts it lost. */
  safetyMarginMs: number;
}

interface Entry {
  resource: string;
  key: string;
  epoch: number;
  /** The key's revision after our last write: the compare-and-set base of the next one. */
  revision: number;
  since: number;
  /** Monotonic ms from which the lease counts as lost. */
  deadline: number;
  timer?: ReturnType<typeof setTimeout>;
  state: "held" | "releasing" | "gone";
  notified: boolean;
  renewing: boolean;
  /** Writes to one key go one after another, so a renewal and a release never race. */
  chain: Promise<unknown>;
}

/** Read through a call, as the state changes while a renewal awaits (TypeScript would keep the narrowing). */
const isGone = (e: Entry) => e.state === "gone";

const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));

/**
 * The leases one member holds: acquire by `create`, renew by compare-and-set `update`,
 * release by compare-and-set `delete`, and self-fencing. A lease is good until its last
 * successful renewal was *sent* plus TTL minus the safety margin: the server stored that
 * write no earlier than it was sent, so it cannot expire it, and no other member can
 * create it, before then. Past that point the holder calls it lost, whether or not the
 * server has answered (a pause, NATS out of reach).
 */
export class LeaseHolder {
  readonly counters: LeaseCounters = { acquisitions: 0, losses: 0, releases: 0, renewFailures: 0 };
  private readonly entries = new Map<string, Entry>();
  private readonly opTimeoutMs: number;

  constructor(
    private readonly kv: KV,
    private readonly memberId: string,
    private readonly timings: LeaseTimings,
    private readonly callbacks: LeaseCallbacks,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.opTimeoutMs = Math.max(1, Math.floor(timings.ttlMs / 3));
  }

  /** Held or being released. */
  has(resource: string): boolean {
    return this.entries.has(resource);
  }

  /** Held and not being released. */
  isHeld(resource: string): boolean {
    return this.entries.get(resource)?.state === "held";
  }

  /**
   * The epoch while the lease is good, else null. Checks the deadline itself, so a
   * process that was paused past it learns so here before any timer has run.
   */
  holds(resource: string): number | null {
    const e = this.entries.get(resource);
    if (!e || e.state === "gone") return null;
    if (this.now() >= e.deadline) {
      this.lose(e, "expired");
      return null;
    }
    return e.epoch;
  }

  held(): HeldLease[] {
    return [...this.entries.values()].map((e) => ({ resource: e.resource, epoch: e.epoch, since: e.since }));
  }

  /** Creates the lease; its epoch, or null when another member holds it or NATS did not answer in time. */
  async acquire(resource: string): Promise<number | null> {
    if (this.entries.has(resource)) return null;
    const key = leaseKey(resource);
    const sentAt = this.now();
    let revision: number;
    try {
      revision = await withTimeout(this.kv.create(key, JSON.stringify({ member: this.memberId, epoch: 0 } satisfies LeaseRecord)), this.opTimeoutMs);
    } catch (err) {
      if (!isCasConflict(err)) this.callbacks.onError(new LeaseOperationError("create", key, { cause: err }));
      return null;
    }
    const e: Entry = { resource, key, epoch: revision, revision, since: Date.now(), deadline: this.deadlineAfter(sentAt), state: "held", notified: false, renewing: false, chain: Promise.resolve() };
    if (this.now() >= e.deadline || this.entries.has(resource)) {
      // Won too late to use safely: free it at once rather than hold it unused.
      await this.casDelete(e, true);
      return null;
    }
    this.entries.set(resource, e);
    this.counters.acquisitions++;
    this.arm(e);
    try {
      await this.callbacks.onAcquired(resource, revision);
    } catch (err) {
      this.callbacks.onError(asError(err));
      await this.release(resource, "released");
      return null;
    }
    return revision;
  }

  /** Starts one renewal of every lease (one at a time per lease: a renewal still in flight is not doubled). */
  renewAll(): void {
    for (const e of this.entries.values()) {
      if (e.renewing) continue;
      e.renewing = true;
      e.chain = e.chain.then(() => this.renew(e)).finally(() => (e.renewing = false));
    }
  }

  /** Gives the lease up: `onLost` first, then the key is deleted (compare-and-set) so the next owner can create it at once. */
  async release(resource: string, reason: "released" | "stopped"): Promise<void> {
    const e = this.entries.get(resource);
    if (!e || e.state !== "held") return;
    e.state = "releasing";
    this.counters.releases++;
    await this.notify(e, reason);
    // It may have lapsed while its owner stopped (and even been won again since).
    if (this.entries.get(resource) !== e) return;
    this.drop(e);
    await (e.chain = e.chain.then(() => this.casDelete(e, false)));
  }

  async releaseAll(reason: "released" | "stopped"): Promise<void> {
    await Promise.all([...this.entries.keys()].map((r) => this.release(r, reason)));
  }

  /**
   * What the watch saw on a lease key. A delete, or a record that is not ours, written
   * at or after our acquisition means the lease is no longer ours (an operator purged it,
   * or it lapsed on the server before our deadline: the safety margin was too small).
   */
  observe(resource: string, revision: number, record: LeaseRecord | null): void {
    const e = this.entries.get(resource);
    if (!e || revision < e.epoch) return;
    if (record && this.isOurs(e, revision, record)) return;
    // Past its deadline the lease had lapsed here before the new owner came (a member waking
    // from a pause reads the watch's backlog before any timer runs): that is "expired".
    // "taken" is kept for a takeover inside our deadline, which means the margin was too small.
    this.lose(e, this.now() >= e.deadline ? "expired" : "taken");
  }

  /**
   * Deletes a lease of ours we do not track: a create whose answer came too late, or one
   * we gave up whose delete did not get through. Best effort: the TTL frees it anyway.
   */
  async deleteOrphan(resource: string, revision: number): Promise<void> {
    if (this.entries.has(resource)) return;
    try {
      await withTimeout(this.kv.delete(leaseKey(resource), { previousSeq: revision }), this.opTimeoutMs);
    } catch (err) {
      if (!isCasConflict(err) && !(err instanceof LeaseTimeoutError)) this.callbacks.onError(new LeaseOperationError("delete", leaseKey(resource), { cause: err }));
    }
  }

  private async renew(e: Entry): Promise<void> {
    if (e.state === "gone") return;
    const sentAt = this.now();
    if (sentAt >= e.deadline) return this.lose(e, "expired");
    try {
      const value = JSON.stringify({ member: this.memberId, epoch: e.epoch } satisfies LeaseRecord);
      const revision = await withTimeout(this.kv.update(e.key, value, e.revision), Math.min(this.opTimeoutMs, e.deadline - sentAt));
      if (isGone(e)) return;
      e.revision = revision;
      e.deadline = this.deadlineAfter(sentAt);
      this.arm(e);
    } catch (err) {
      if (isGone(e)) return;
      this.counters.renewFailures++;
      if (isCasConflict(err)) return this.recheck(e);
      // Out of reach or slow: the next tick tries again, and the deadline decides.
      this.callbacks.onError(new LeaseOperationError("renew", e.key, { cause: err }));
    }
  }

  /** After a failed compare-and-set: a renewal that timed out may have landed, leaving the key ours at a newer revision. */
  private async recheck(e: Entry): Promise<void> {
    let found;
    try {
      found = await withTimeout(this.kv.get(e.key), this.opTimeoutMs);
    } catch {
      return;
    }
    if (e.state === "gone") return;
    const record = found ? parseRecord(found, isLeaseRecord) : null;
    // Adopting the revision keeps the old deadline: when that write was sent is unknown.
    if (found && record && this.isOurs(e, found.revision, record)) e.revision = Math.max(e.revision, found.revision);
    else this.lose(e, "taken");
  }

  private isOurs(e: Entry, revision: number, record: LeaseRecord): boolean {
    return record.member === this.memberId && (record.epoch === e.epoch || (record.epoch === 0 && revision === e.epoch));
  }

  private deadlineAfter(sentAt: number): number {
    return sentAt + this.timings.ttlMs - this.timings.safetyMarginMs;
  }

  private arm(e: Entry): void {
    clearTimeout(e.timer);
    // Timers count whole milliseconds and may fire a fraction early: check, and wait again if so.
    e.timer = setTimeout(() => {
      if (this.entries.get(e.resource) === e && this.holds(e.resource) !== null) this.arm(e);
    }, Math.max(0, Math.ceil(e.deadline - this.now())));
    e.timer.unref();
  }

  private lose(e: Entry, reason: "expired" | "taken"): void {
    if (e.state === "gone") return;
    this.drop(e);
    this.counters.losses++;
    const stopped = this.notify(e, reason);
    // Still ours on the server if it has not expired it and NATS answers: freeing it now
    // lets the next owner start without waiting out the TTL.
    if (reason === "expired") e.chain = e.chain.then(() => stopped).then(() => this.casDelete(e, true));
  }

  private drop(e: Entry): void {
    e.state = "gone";
    clearTimeout(e.timer);
    if (this.entries.get(e.resource) === e) this.entries.delete(e.resource);
  }

  private async notify(e: Entry, reason: LossReason): Promise<void> {
    if (e.notified) return;
    e.notified = true;
    try {
      await this.callbacks.onLost(e.resource, e.epoch, reason);
    } catch (err) {
      this.callbacks.onError(asError(err));
    }
  }

  private async casDelete(e: Entry, quiet: boolean): Promise<void> {
    try {
      await withTimeout(this.kv.delete(e.key, { previousSeq: e.revision }), this.opTimeoutMs);
    } catch (err) {
      // A conflict means it changed meanwhile (expired, taken): nothing of ours to free.
      if (!quiet && !isCasConflict(err)) this.callbacks.onError(new LeaseOperationError("delete", e.key, { cause: err }));
    }
  }
}
