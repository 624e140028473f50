import { ensureLeaseBucket } from "../infra/nats/lease-bucket.js";
import { Membership } from "../infra/nats/membership.js";
import type { InstanceStatus } from "../infra/metrics/instance-status.js";
import type { NatsConnection } from "@nats-io/transport-node";

/** Work that runs only while this member holds its lease. */
export interface LeasedTask {
  start(epoch: number): Promise<void>;
  /** Must end in bounded time: a stuck stop would hold the lease hand-over (and a graceful stop). */
  stop(): Promise<void>;
}

interface Logger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

/** Longest a task may take to stop before the member lets its lease go anyway. */
const STOP_LIMIT_MS = 15_000;

/** The lease names of a namespace's work: a partition is `p.{n}`. */
export const partitionResource = (p: number) => `p.${p}`;

/**
 * This member's share of the namespace's background work: it joins the namespace's
 * members (infra/nats/membership.ts), and starts each task when its lease is acquired and
 * stops it when the lease is lost, handed over or given up on stop. A stop is bounded:
 * past STOP_LIMIT_MS the lease goes anyway, which is safe because every kind of work is
 * fenced or idempotent (saves, inserts, job snapshots).
 */
export class LeasedWork {
  private membership: Membership | null = null;
  private readonly running = new Map<string, Promise<void>>();

  private constructor(
    private readonly tasks: ReadonlyMap<string, LeasedTask>,
    private readonly log: Logger,
  ) {}

  static async join(o: {
    nc: NatsConnection;
    namespace: string;
    ttlMs: number;
    instance: InstanceStatus;
    tasks: ReadonlyMap<string, LeasedTask>;
    log: Logger;
  }): Promise<LeasedWork> {
    const work = new LeasedWork(o.tasks, o.log);
    const kv = await ensureLeaseBucket(o.nc, o.namespace, o.ttlMs);
    work.membership = await Membership.join({
      kv,
      ttlMs: o.ttlMs,
      member: { id: o.instance.id, role: o.instance.role, pid: o.instance.pid },
      resources: [...o.tasks.keys()],
      onAcquired: (resource, epoch) => work.started(resource, epoch),
      onLost: (resource, epoch, reason) => work.stopped(resource, epoch, reason),
      onError: (err) => o.log.warn({ err }, "lease table: an operation failed; retrying"),
    });
    o.instance.setLeases(work.membership);
    return work;
  }

  /** The resources this member works now. */
  held(): string[] {
    return this.membership?.held().map((l) => l.resource) ?? [];
  }

  private async started(resource: string, epoch: number): Promise<void> {
    const task = this.tasks.get(resource);
    if (!task) return;
    // A stop of an earlier tenure still running ends first.
    await this.running.get(resource);
    const t0 = performance.now();
    const run = task.start(epoch);
    this.running.set(resource, run.catch(() => undefined));
    try {
      await run;
    } catch (err) {
      // Thrown on to the membership, which gives the lease up; its next rebalance takes it
      // again and starts the work anew. Kept, the lease would hold work that never runs.
      this.log.error({ err, resource }, "leased work failed to start; its lease is given up and taken again");
      throw err;
    }
    this.log.info({ resource, epoch, start_ms: Math.round(performance.now() - t0) }, "lease acquired");
  }

  private async stopped(resource: string, epoch: number, reason: string): Promise<void> {
    const task = this.tasks.get(resource);
    if (!task) return;
    const before = this.running.get(resource);
    const stop = (async () => {
      await before;
      let timer: NodeJS.Timeout | undefined;
      const limit = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), STOP_LIMIT_MS)));
      const outcome = await Promise.race([task.stop().catch((err: unknown) => this.log.error({ err, resource }, "leased work failed to stop cleanly")), limit]);
      clearTimeout(timer);
      if (outcome === "late") this.log.error({ resource, limit_ms: STOP_LIMIT_MS }, "leased work did not stop in time; its lease goes anyway");
    })();
    this.running.set(resource, stop);
    await stop;
    this.log.info({ resource, epoch, reason }, "lease given up");
  }

  /** Gives every lease up (their tasks stop first) and leaves the namespace's members. */
  async stop(): Promise<void> {
    await this.membership?.stop();
    await Promise.all(this.running.values());
  }
}
