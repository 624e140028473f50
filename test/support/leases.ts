import type { KV } from "@nats-io/kv";
import type { LossReason } from "../../infra/nats/leases.js";
import type { Membership } from "../../infra/nats/membership.js";

/** Wall-clock ms with sub-ms precision, comparable across processes on one machine. */
export const stamp = () => performance.timeOrigin + performance.now();

export interface LeaseEvent {
  t: number;
  member: string;
  kind: "acquired" | "lost";
  resource: string;
  epoch: number;
  reason?: LossReason;
}

/** Every member's acquisitions and losses, stamped when the callback ran. */
export class LeaseLog {
  readonly events: LeaseEvent[] = [];

  callbacks(member: string) {
    return {
      onAcquired: (resource: string, epoch: number) => {
        this.events.push({ t: stamp(), member, kind: "acquired", resource, epoch });
      },
      onLost: (resource: string, epoch: number, reason: LossReason) => {
        this.events.push({ t: stamp(), member, kind: "lost", resource, epoch, reason });
      },
    };
  }

  /**
   * Resource by resource in time order: each acquisition comes after the previous
   * holder's loss (no instant at which two members believe they hold it) and has a higher
   * epoch than every earlier one. Returns the problems found, empty when none.
   */
  violations(): string[] {
    const out: string[] = [];
    const byResource = new Map<string, LeaseEvent[]>();
    for (const e of this.events) byResource.set(e.resource, [...(byResource.get(e.resource) ?? []), e]);
    for (const [resource, events] of byResource) {
      let holder: LeaseEvent | null = null;
      let lastEpoch = 0;
      for (const e of [...events].sort((a, b) => a.t - b.t)) {
        if (e.kind === "acquired") {
          if (holder) out.push(`${resource}: ${e.member} acquired epoch ${e.epoch} at ${e.t.toFixed(1)} while ${holder.member} held epoch ${holder.epoch}`);
          if (e.epoch <= lastEpoch) out.push(`${resource}: epoch ${e.epoch} of ${e.member} is not above ${lastEpoch}`);
          holder = e;
          lastEpoch = Math.max(lastEpoch, e.epoch);
        } else {
          if (holder?.member !== e.member || holder.epoch !== e.epoch) out.push(`${resource}: ${e.member} lost epoch ${e.epoch} it was not recorded holding`);
          else holder = null;
        }
      }
    }
    return out;
  }
}

/** Who holds each resource now (by `holds()`, which checks the self-fencing deadline). */
export function owners(members: readonly Membership[], resources: readonly string[]): Map<string, string[]> {
  return new Map(resources.map((r) => [r, members.filter((m) => m.holds(r) !== null).map((m) => m.id)]));
}

/** Each resource has exactly one holder among `members`, and their loads differ by at most one. */
export function ownedOnceAndBalanced(members: readonly Membership[], resources: readonly string[]): boolean {
  const o = owners(members, resources);
  if ([...o.values()].some((h) => h.length !== 1)) return false;
  const loads = members.map((m) => [...o.values()].filter((h) => h[0] === m.id).length);
  return Math.max(...loads) - Math.min(...loads) <= 1;
}

/** Polls `ok` every 20 ms until it holds or `ms` pass; the elapsed ms, or throws with `what`. */
export async function until(ok: () => boolean, ms: number, what: string): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (ok()) return performance.now() - start;
    if (performance.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const WRITES = new Set(["create", "update", "put", "delete", "purge", "get"]);

/**
 * The bucket as seen by a member cut off from NATS: while frozen, its reads and writes
 * never answer (the watch it already has keeps delivering, as a half-open link would).
 */
export function freezable(kv: KV): { kv: KV; freeze(): void; thaw(): void } {
  let frozen = false;
  const proxy = new Proxy(kv, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      if (typeof v !== "function") return v;
      return (...args: unknown[]): unknown => (frozen && typeof prop === "string" && WRITES.has(prop) ? new Promise(() => {}) : Reflect.apply(v, target, args));
    },
  });
  return {
    kv: proxy,
    freeze: () => (frozen = true),
    thaw: () => (frozen = false),
  };
}
