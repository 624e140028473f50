import type { JetStreamManager } from "@nats-io/jetstream";
import type { TopologyNames } from "../infra/nats/topology.js";

/** What the durables of a namespace's log stream have yet to acknowledge, in messages. */
export interface Backlog {
  /** The state engine's durables (`{ns}_state_p{N}_{epoch}`), summed: num_pending + num_ack_pending. */
  state: number;
  /** Per partition, the same; null while the partition has no durable (no worker holds it yet). */
  byPartition: (number | null)[];
  /** The other durables of the stream (the ClickHouse projector's), by name without the epoch. */
  others: Record<string, number>;
}

const EPOCH = /_\d+$/;

/**
 * Reads every durable of the log stream (JetStream's consumer list). Under load its API
 * can time out: a read that failed is asked again, up to `tries` times.
 */
export async function logBacklog(jsm: JetStreamManager, ns: string, names: TopologyNames, tries = 5): Promise<Backlog> {
  for (let i = 1; ; i++) {
    try {
      return await readBacklog(jsm, ns, names);
    } catch (err) {
      if (i >= tries) throw err;
    }
  }
}

async function readBacklog(jsm: JetStreamManager, ns: string, names: TopologyNames): Promise<Backlog> {
  const byPartition: (number | null)[] = Array.from({ length: names.partitions }, () => null);
  const others: Record<string, number> = {};
  const statePrefix = `${ns}_state_p`;
  for await (const c of jsm.consumers.list(names.logsStream)) {
    // A durable deleted while the list is read (a lease hand-over) comes as null.
    if (!c) continue;
    const pending = c.num_pending + c.num_ack_pending;
    if (c.name.startsWith(statePrefix)) {
      const p = Number(c.name.slice(statePrefix.length).split("_")[0]);
      byPartition[p] = (byPartition[p] ?? 0) + pending;
    } else if (c.config.durable_name) {
      const family = c.name.replace(EPOCH, "");
      others[family] = (others[family] ?? 0) + pending;
    }
  }
  return { state: byPartition.reduce<number>((s, b) => s + (b ?? 0), 0), byPartition, others };
}

/** Every partition has a durable and none has anything left to apply. */
export const stateDrained = (b: Backlog) => b.byPartition.every((p) => p === 0);

/**
 * Polls the backlog until the state engine has applied everything (see stateDrained) and
 * returns the seconds that took from `since` (a performance.now() value), when every
 * partition first had a durable (workers starting take their leases first), and one sample
 * a second (seconds since `since`, messages left, partitions with a durable) to show the
 * drain's shape. Stops waiting after `limitS` seconds and says so (drained: false).
 */
export async function waitStateDrained(
  jsm: JetStreamManager,
  ns: string,
  names: TopologyNames,
  since: number,
  limitS = 600,
): Promise<{ drained: boolean; seconds: number; allHeldAt: number | null; samples: [number, number, number][]; last: Backlog }> {
  const samples: [number, number, number][] = [];
  let nextSample = 0;
  let allHeldAt: number | null = null;
  let last: Backlog = { state: NaN, byPartition: [], others: {} };
  for (;;) {
    const b = await logBacklog(jsm, ns, names, 1).catch(() => null);
    const t = (performance.now() - since) / 1000;
    const held = b ? b.byPartition.filter((p) => p !== null).length : 0;
    if (b && allHeldAt === null && held === names.partitions) allHeldAt = +t.toFixed(2);
    if (b && t >= nextSample) {
      samples.push([Math.round(t), b.state, held]);
      nextSample = Math.floor(t) + 1;
    }
    if (b && stateDrained(b)) return { drained: true, seconds: +t.toFixed(2), allHeldAt, samples, last: b };
    if (b) last = b;
    if (t > limitS) return { drained: false, seconds: +t.toFixed(2), allHeldAt, samples, last };
    await new Promise((r) => setTimeout(r, 100));
  }
}
