import { hostname } from "node:os";
import { KvWatchInclude, type KV, type KvWatchEntry } from "@nats-io/kv";
import { assignResources } from "./lease-assignment.js";
import { checkLeaseName, DEFAULT_LEASE_TTL_MS, LeaseOperationError, LeaseTtlMismatchError, memberKey, withTimeout, type MemberRecord } from "./lease-bucket.js";
import { LeaseView } from "./lease-view.js";
import { LeaseHolder, type HeldLease, type LeaseCounters, type LossReason } from "./leases.js";

export interface MembershipOptions {
  /** The leases bucket, from ensureLeaseBucket() with the same TTL. */
  kv: KV;
  /** This member. The id must be unique to this process and run, e.g. `${hostname}-${pid}-${random}`. */
  member: { id: string; role: string; host?: string; pid?: number };
  /** Every resource the members share, e.g. `p.0` … `p.15`, `projector`, `jobs`. */
  resources: readonly string[];
  /** Whether a member may work a resource (its role can). @default every member works everything */
  canWork?: (resource: string, member: MemberRecord) => boolean;
  /** A member's share relative to the others'. @default 1 */
  weight?: (member: MemberRecord) => number;
  /** Lease and member TTL; must equal the bucket's. Renewals go every TTL/3. @default 10_000 (10 s) */
  ttlMs?: number;
  /**
   * How long before the server could expire a lease its holder counts it lost: room for
   * a late timer, stopping the work, and the machines' clocks running at slightly
   * different rates. @default ttlMs / 5 (2 s)
   */
  safetyMarginMs?: number;
  /** The lease on `resource` is ours from `epoch` on. Awaited: the rebalancer waits for it. */
  onAcquired?: (resource: string, epoch: number) => void | Promise<void>;
  /** Stop working `resource` (see LeaseCallbacks.onLost). */
  onLost?: (resource: string, epoch: number, reason: LossReason) => void | Promise<void>;
  /** A failed KV operation or callback; the membership carries on. @default ignored */
  onError?: (err: Error) => void;
}

/** Watch events come in bursts (a join, a handover): one rebalance for a burst. */
const DEBOUNCE_MS = 20;
/**
 * A key lapses on the server's clock a little before our watch's (it stored the write
 * before we saw it); this covers the server's expiry timer running late. A create that
 * still finds the key is tried again after RETRY_MS, doubled while it keeps finding it.
 */
const LAPSE_SLACK_MS = 50;
const RETRY_MS = 100;

/**
 * One member of a namespace's group: keeps `member.{id}` alive, and holds the leases the
 * assignment gives it. Every TTL/3, and when the watch shows a member or lease come or
 * go, it rebalances: it creates the leases it is preferred for whose holder is not a live
 * member (free, released, or lapsed), waits for a live holder to hand one over, and
 * releases those it holds but is no longer preferred for. A member is live while its key
 * was rewritten within the TTL by this member's own clock (the watch sees each renewal),
 * so no two machines need agree on the time.
 */
export class Membership {
  readonly id: string;
  readonly ttlMs: number;
  private readonly resources: readonly string[];
  private readonly record: MemberRecord;
  private readonly holder: LeaseHolder;
  private readonly view: LeaseView;
  private readonly opTimeoutMs: number;
  private watch?: AsyncIterable<KvWatchEntry> & { stop(): void };
  private watchEnded = false;
  private watchStarting = false;
  private lastEventAt = 0;
  private tickTimer?: ReturnType<typeof setInterval>;
  private debounceTimer?: ReturnType<typeof setTimeout>;
  /** Runs a rebalance when the next key lapses: a dead member's leases are taken then, not at the next tick. */
  private lapseTimer?: ReturnType<typeof setTimeout>;
  /** Rebalances in a row that could not create a lease they found free. */
  private misses = 0;
  private running?: Promise<void>;
  private again = false;
  private stopping = false;
  private stopped?: Promise<void>;
  private memberWrite?: Promise<void>;
  private assignment?: { key: string; owners: Map<string, string | null> };

  private constructor(private readonly options: MembershipOptions) {
    checkLeaseName("member id", options.member.id);
    for (const r of options.resources) checkLeaseName("resource", r);
    this.id = options.member.id;
    this.resources = [...new Set(options.resources)];
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.view = new LeaseView(this.ttlMs);
    this.opTimeoutMs = Math.max(1, Math.floor(this.ttlMs / 3));
    const safetyMarginMs = options.safetyMarginMs ?? Math.floor(this.ttlMs / 5);
    if (!(safetyMarginMs >= 0 && safetyMarginMs < (this.ttlMs * 2) / 3)) throw new RangeError(`safetyMarginMs must be at least 0 and less than two thirds of the TTL (${this.ttlMs} ms), got ${safetyMarginMs}`);
    const { id, role, host = hostname(), pid = process.pid } = options.member;
    this.record = { id, role, host, pid, started_at: new Date().toISOString() };
    const onError = options.onError ?? (() => {});
    this.holder = new LeaseHolder(options.kv, id, { ttlMs: this.ttlMs, safetyMarginMs }, {
      onAcquired: (r, epoch) => options.onAcquired?.(r, epoch),
      onLost: (r, epoch, reason) => options.onLost?.(r, epoch, reason),
      onError,
    });
  }

  /** Joins: writes the member key, reads the bucket, takes a first share. Throws when the bucket's TTL is not `ttlMs`. */
  static async join(options: MembershipOptions): Promise<Membership> {
    const m = new Membership(options);
    await m.start();
    return m;
  }

  /** The leases held now (those being released included). */
  held(): HeldLease[] {
    return this.holder.held();
  }

  /**
   * The lease's epoch while this member may work `resource`, else null. Call it before
   * each write the lease guards, and write with the epoch as the fencing token. A lease
   * being released is still held (its `onLost` is finishing the work in flight).
   */
  holds(resource: string): number | null {
    return this.holder.holds(resource);
  }

  /** Live members as this member sees them, itself included. */
  liveMembers(): MemberRecord[] {
    return [...this.live(performance.now()).values()];
  }

  get counters(): Readonly<LeaseCounters> {
    return this.holder.counters;
  }

  /** Leaves: removes the member key, releases every lease (each `onLost` awaited), stops watching. */
  stop(): Promise<void> {
    return (this.stopped ??= this.leave());
  }

  private async leave(): Promise<void> {
    this.stopping = true;
    clearInterval(this.tickTimer);
    clearTimeout(this.debounceTimer);
    clearTimeout(this.lapseTimer);
    await this.running;
    await this.memberWrite;
    // Leaving first makes the others prefer themselves for what this member holds, so
    // each lease is taken as soon as its delete is seen.
    try {
      await withTimeout(this.options.kv.delete(memberKey(this.id)), this.opTimeoutMs);
    } catch (err) {
      this.report(new LeaseOperationError("delete", memberKey(this.id), { cause: err }));
    }
    await this.holder.releaseAll("stopped");
    this.watch?.stop();
  }

  private async start(): Promise<void> {
    const { ttl } = await this.options.kv.status();
    if (ttl !== this.ttlMs) throw new LeaseTtlMismatchError(ttl, this.ttlMs);
    await this.options.kv.put(memberKey(this.id), JSON.stringify(this.record));
    await this.startWatch();
    this.tickTimer = setInterval(() => this.tick(), this.opTimeoutMs);
    this.tickTimer.unref();
    await this.runNow();
  }

  private tick(): void {
    if (this.stopping) return;
    if (!this.memberWrite) {
      this.memberWrite = withTimeout(this.options.kv.put(memberKey(this.id), JSON.stringify(this.record)), this.opTimeoutMs)
        .then(
          () => {},
          (err: unknown) => this.report(new LeaseOperationError("put", memberKey(this.id), { cause: err })),
        )
        .finally(() => (this.memberWrite = undefined));
    }
    this.holder.renewAll();
    // Our own member key is rewritten every tick: a watch silent for a whole TTL is stuck.
    if (!this.watchStarting && (this.watchEnded || performance.now() - this.lastEventAt > this.ttlMs)) {
      void this.startWatch().catch((err: unknown) => this.report(new LeaseOperationError("watch", ">", { cause: err })));
    }
    void this.runNow();
  }

  /** Watches the whole bucket; resolves once the current keys are read (or after TTL/3). */
  private async startWatch(): Promise<void> {
    this.watch?.stop();
    this.watchStarting = true;
    let iter;
    try {
      iter = await this.options.kv.watch({ include: KvWatchInclude.LastValue });
    } finally {
      this.watchStarting = false;
    }
    this.watch = iter;
    this.watchEnded = false;
    this.lastEventAt = performance.now();
    let caughtUp!: () => void;
    const ready = new Promise<void>((resolve) => (caughtUp = resolve));
    void (async () => {
      for await (const e of iter) {
        this.onEntry(e);
        if (e.isUpdate) caughtUp();
      }
    })()
      .catch((err: unknown) => this.report(new LeaseOperationError("watch", ">", { cause: err })))
      .finally(() => {
        if (this.watch === iter) this.watchEnded = true;
        caughtUp();
      });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([ready, new Promise<void>((resolve) => (timer = setTimeout(resolve, this.opTimeoutMs)))]);
    clearTimeout(timer);
  }

  private onEntry(e: KvWatchEntry): void {
    this.lastEventAt = performance.now();
    const { changed, lease } = this.view.apply(e, this.lastEventAt);
    if (lease) this.holder.observe(lease.resource, lease.revision, lease.record);
    // Renewals change nothing; lapses are not written at all, and ticks find them.
    if (changed && !this.stopping && !this.debounceTimer) {
      this.debounceTimer = setTimeout(() => {
        this.debounceTimer = undefined;
        void this.runNow();
      }, DEBOUNCE_MS);
      this.debounceTimer.unref();
    }
  }

  /** One rebalance at a time; a request during one makes one more run after it. */
  private async runNow(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.rebalance();
        } catch (err) {
          this.report(err instanceof Error ? err : new Error(String(err)));
        }
      } while (this.again && !this.stopping);
      if (!this.stopping) this.armLapse();
    })();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
  }

  /** Rebalances when the next key lapses, or soon after a rebalance that could not create a lease it found free. */
  private armLapse(): void {
    const now = performance.now();
    const next = this.view.nextLapse(now);
    const wait = this.misses > 0 ? RETRY_MS * 2 ** (this.misses - 1) : next === undefined ? undefined : next - now + LAPSE_SLACK_MS;
    clearTimeout(this.lapseTimer);
    this.lapseTimer = undefined;
    if (wait === undefined) return;
    this.lapseTimer = setTimeout(() => void this.runNow(), Math.max(0, Math.min(wait, this.opTimeoutMs)));
    this.lapseTimer.unref();
  }

  private async rebalance(): Promise<void> {
    if (this.stopping) return;
    const now = performance.now();
    const live = this.live(now);
    const owners = this.owners(live);
    const work: Promise<unknown>[] = [];
    let missed = false;
    for (const r of this.resources) {
      const preferred = owners.get(r) ?? null;
      if (this.holder.has(r)) {
        if (preferred !== this.id && this.holder.isHeld(r)) work.push(this.holder.release(r, "released"));
        continue;
      }
      const lease = this.view.currentLease(r, now);
      if (lease?.record.member === this.id) {
        work.push(this.holder.deleteOrphan(r, lease.revision));
        continue;
      }
      if (preferred !== this.id) continue;
      // A live holder hands it over once it sees it is not preferred; a lapsed or dead one
      // cannot, and the create succeeds once the server has dropped its key.
      if (lease && live.has(lease.record.member)) continue;
      work.push(this.holder.acquire(r).then((epoch) => (missed ||= epoch === null)));
    }
    await Promise.all(work);
    // Free by our view but not on the server (its expiry ran late, or another member's create
    // is not seen yet): armLapse tries again soon rather than at the next tick.
    this.misses = missed ? this.misses + 1 : 0;
  }

  private live(now: number): Map<string, MemberRecord> {
    const out = this.view.liveMembers(now);
    if (!this.stopping) out.set(this.id, this.record);
    return out;
  }

  private owners(live: Map<string, MemberRecord>): Map<string, string | null> {
    const key = [...live.keys()].sort().join(" ");
    if (this.assignment?.key !== key) {
      this.assignment = { key, owners: assignResources(this.resources, [...live.values()], { canWork: this.options.canWork, weight: this.options.weight }) };
    }
    return this.assignment.owners;
  }

  private report(err: Error): void {
    this.options.onError?.(err);
  }
}
