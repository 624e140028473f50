import type { HeldLease } from "../nats/leases.js";

export type { HeldLease };

/**
 * What the lease table of a process tells about it (infra/nats/membership.ts's Membership
 * has this shape): running counts of leases acquired, lost (expired or taken) and given
 * up (released or stopped), and the leases held now (resource, epoch, since in ms).
 */
export interface LeaseSource {
  readonly counters: { readonly acquisitions: number; readonly losses: number; readonly releases: number };
  held(): HeldLease[];
}

/** What this process calls itself: "api", "worker", or "all" (both in one process, as tests build the service). */
export type InstanceRole = "all" | "api" | "worker";

/** One process as /healthz shows it. */
export interface InstanceSnapshot {
  id: string;
  role: InstanceRole;
  pid: number;
  /** Partitions of the log stream this process applies, ascending. */
  partitions: number[];
  /** Leases this process holds, by resource; `since` as an ISO 8601 time. */
  leases: { resource: string; epoch: number; since: string }[];
  /** When the process said so, as an ISO 8601 time: a sibling's report may be a few seconds old. */
  reported_at: string;
}

const NO_LEASES: LeaseSource = { counters: { acquisitions: 0, losses: 0, releases: 0 }, held: () => [] };

/**
 * One process of the service, and what it works: the partitions it applies and the leases
 * it holds. The code that owns them registers itself here (`setPartitions`, `setLeases`),
 * and /healthz and /metrics read them at request time, so neither depends on that code.
 * Until something registers, a process works no partition and holds no lease.
 */
export class InstanceStatus {
  private partitionsOf: () => readonly number[] = () => [];
  private leaseSource: LeaseSource = NO_LEASES;

  constructor(
    /** Stable for the life of the process, unique across restarts and machines. */
    readonly id: string,
    readonly role: InstanceRole,
    readonly pid: number,
  ) {}

  /** Tells which partitions this process applies now; called at each read. */
  setPartitions(partitions: () => readonly number[]): void {
    this.partitionsOf = partitions;
  }

  /** The lease table of this process (its counters and held leases, read at each request). */
  setLeases(source: LeaseSource): void {
    this.leaseSource = source;
  }

  partitions(): number[] {
    return [...this.partitionsOf()].sort((a, b) => a - b);
  }

  leases(): HeldLease[] {
    return [...this.leaseSource.held()].sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  }

  leaseCounters(): LeaseSource["counters"] {
    return this.leaseSource.counters;
  }

  snapshot(): InstanceSnapshot {
    return {
      id: this.id,
      role: this.role,
      pid: this.pid,
      partitions: this.partitions(),
      leases: this.leases().map((l) => ({ resource: l.resource, epoch: l.epoch, since: new Date(l.since).toISOString() })),
      reported_at: new Date().toISOString(),
    };
  }

  /** Log lines name the process by its snapshot. */
  toJSON(): InstanceSnapshot {
    return this.snapshot();
  }
}
