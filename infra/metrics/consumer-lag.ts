import type { JetStreamManager } from "@nats-io/jetstream";
import { Gauge, Registry } from "prom-client";
import type { MetricJson } from "./process-metrics.js";

/** One durable consumer's backlog: messages not yet delivered plus delivered but not acknowledged. */
export interface ConsumerLagSample {
  stream: string;
  consumer: string;
  /** From a name ending in `_p{N}` (one durable per partition), else absent. */
  partition?: number;
  pending: number;
  ackPending: number;
}

export interface ConsumerLagOptions {
  /** Longest a read of the consumers may take before the scrape goes on without them. @default 1_000 (1 s) */
  timeoutMs?: number;
  /** How long a read is reused: several scrapes (of several processes) in a row ask JetStream once. @default 2_000 (2 s) */
  cacheMs?: number;
}

const PARTITION = /_p(\d+)$/;
/** A lease tenure's durable ends in `_{epoch}` (actors/partition-readers.ts): the label leaves it out, so a hand-over keeps the series. */
const EPOCH = /_\d+$/;

/**
 * The lag of a namespace's durable consumers (the state engine's, the projector's, the
 * device feed's), read from JetStream's consumer info when a scrape asks. Lag is the
 * namespace's, not a process's: any process can read it, and only the one answering a
 * scrape does, so it is counted once. Ephemeral consumers (a replay's ordered reads)
 * have no durable name and are left out, so the label's values stay few.
 */
export class ConsumerLag {
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private last: { at: number; read: Promise<ConsumerLagSample[]> } | null = null;
  private readonly registry = new Registry();

  constructor(
    private readonly jsm: JetStreamManager,
    private readonly streams: readonly string[],
    options: ConsumerLagOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 1_000;
    this.cacheMs = options.cacheMs ?? 2_000;
    const gauge: Gauge<"stream" | "consumer" | "partition"> = new Gauge({
      name: "pss_lag_messages",
      help: "Messages of a durable consumer not yet acknowledged (JetStream's num_pending plus num_ack_pending), read at scrape time; absent when JetStream did not answer in time",
      labelNames: ["stream", "consumer", "partition"],
      registers: [this.registry],
      collect: async () => {
        const samples = await this.read().catch(() => []);
        gauge.reset();
        for (const s of samples) {
          const labels = s.partition === undefined ? { stream: s.stream, consumer: s.consumer } : { stream: s.stream, consumer: s.consumer, partition: String(s.partition) };
          gauge.set(labels, s.pending + s.ackPending);
        }
      },
    });
  }

  /** The durable consumers of the streams, at most cacheMs old. */
  read(): Promise<ConsumerLagSample[]> {
    const now = Date.now();
    if (this.last && now - this.last.at < this.cacheMs) return this.last.read;
    const read = this.fetch();
    this.last = { at: now, read };
    // A failed read is not kept: the next scrape asks again.
    read.catch(() => {
      if (this.last?.read === read) this.last = null;
    });
    return read;
  }

  /** The gauge, for the process answering a scrape. */
  json(): Promise<MetricJson[]> {
    return this.registry.getMetricsAsJSON();
  }

  private async fetch(): Promise<ConsumerLagSample[]> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`consumer info did not come within ${this.timeoutMs} ms`)), this.timeoutMs);
    });
    try {
      const lists = await Promise.race([Promise.all(this.streams.map((s) => this.durablesOf(s))), timeout]);
      return lists.flat();
    } finally {
      clearTimeout(timer);
    }
  }

  private async durablesOf(stream: string): Promise<ConsumerLagSample[]> {
    const out: ConsumerLagSample[] = [];
    for await (const ci of this.jsm.consumers.list(stream)) {
      const durable = ci.config.durable_name;
      if (!durable) continue;
      const consumer = durable.replace(EPOCH, "");
      const m = PARTITION.exec(consumer);
      // Two tenures' durables side by side (a hand-over in progress) add up.
      const same = out.find((o) => o.consumer === consumer);
      if (same) {
        same.pending += ci.num_pending;
        same.ackPending += ci.num_ack_pending;
      } else out.push({ stream, consumer, ...(m ? { partition: Number(m[1]) } : {}), pending: ci.num_pending, ackPending: ci.num_ack_pending });
    }
    return out.sort((a, b) => (a.consumer < b.consumer ? -1 : a.consumer > b.consumer ? 1 : 0));
  }
}
