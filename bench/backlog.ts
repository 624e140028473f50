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
 *
 * Reads `pollMs` apart, one at a time: on nats-server 2.9 a list computes every durable's
 * num_pending over the partition filters, which took 2-6 s on a 200,000-message stream of
 * 10,000 patient subjects, and blocks the reading connection meanwhile; polled faster, the
 * bench's own reads slowed the workers' JetStream calls (their lease take-overs list too).
 * So the drain time is known to within pollMs plus one list's time (listMs).
 */
export async function waitStateDrained(
  jsm: JetStreamManager,
  ns: string,
  names: TopologyNames,
  since: number,
  o: { limitS?: number; pollMs?: number } = {},
): Promise<{ drained: boolean; seconds: number; allHeldAt: number | null; samples: [number, number, number][]; listMs: { median: number; max: number }; last: Backlog }> {
  const { limitS = 900, pollMs = 1000 } = o;
  const listMs: number[] = [];
  const samples: [number, number, number][] = [];
  let nextSample = 0;
  let allHeldAt: number | null = null;
  let last: Backlog = { state: NaN, byPartition: [], others: {} };
  for (;;) {
    const asked = performance.now();
    const b = await logBacklog(jsm, ns, names, 1).catch(() => null);
    listMs.push(performance.now() - asked);
    const t = (performance.now() - since) / 1000;
    const held = b ? b.byPartition.filter((p) => p !== null).length : 0;
    if (b && allHeldAt === null && held === names.partitions) allHeldAt = +t.toFixed(2);
    if (b && t >= nextSample) {
      samples.push([Math.round(t), b.state, held]);
      nextSample = Math.floor(t) + 1;
    }
    const lists = () => {
      const sorted = [...listMs].sort((a, b) => a - b);
      return { median: Math.round(sorted[sorted.length >> 1]!), max: Math.round(sorted.at(-1)!) };
    };
    if (b && stateDrained(b)) return { drained: true, seconds: +t.toFixed(2), allHeldAt, samples, listMs: lists(), last: b };
    if (b) last = b;
    if (t > limitS) return { drained: false, seconds: +t.toFixed(2), allHeldAt, samples, listMs: lists(), last };
    await new Promise((r) => setTimeout(r, Math.max(0, pollMs - (performance.now() - asked))));
  }
}
