import { AckPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import { PacedPull } from "../infra/nats/paced-pull.js";
import { takeOverDurable, type DurableConfig } from "../infra/nats/durable-consumer.js";

export interface PartitionReadersOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
  /** The name prefix of a partition's durables (a tenure's name adds its epoch), and the subjects they filter. */
  durable: (partition: number) => { family: string; filter: string };
  /** Extra durable settings (ack wait, max_ack_pending). */
  config?: Partial<DurableConfig>;
  /** Bytes one pull should bring (see PacedPull). */
  pullBytes: number;
  /** Resolves when the reader has room for more messages. */
  room: () => Promise<void>;
  /** Called for each message, in stream order within a partition. */
  dispatch: (m: JsMsg, partition: number) => void;
  log: { warn(obj: unknown, msg?: string): void; error(obj: unknown, msg?: string): void };
  /** What reads ("state engine", "projector"), for log lines. */
  name: string;
}

/** Longest a reader dispatches before letting the event loop turn. */
const YIELD_EVERY_MS = 10;

interface Reader {
  pull: PacedPull | null;
  /** The start (durable made again from its ack floor) and then the read loop. */
  done: Promise<void>;
  stopped: boolean;
}

/**
 * Durable consumers of a stream's partitions, read while this member holds them. A
 * partition is added when its lease is acquired and removed when it is lost; its durable
 * is made again from its ack floor on every add (see durableFromAckFloor), so what the
 * previous holder took and did not acknowledge comes first, in order, and a previous
 * holder still pulling (a lapsed lease) loses its pulls.
 */
export class PartitionReaders {
  private readonly readers = new Map<number, Reader>();

  constructor(private readonly o: PartitionReadersOptions) {}

  held(): number[] {
    return [...this.readers.keys()].sort((a, b) => a - b);
  }

  has(partition: number): boolean {
    return this.readers.has(partition);
  }

  /**
   * Starts reading `partition` under the lease of `epoch` (0 without leases); resolves once
   * its durable is ready and the first pull is out.
   */
  async add(partition: number, epoch = 0): Promise<void> {
    if (this.readers.has(partition)) return;
    const reader: Reader = { pull: null, done: Promise.resolve(), stopped: false };
    this.readers.set(partition, reader);
    let ready!: () => void;
    const started = new Promise<void>((r) => (ready = r));
    const run = this.run(partition, epoch, reader, ready);
    reader.done = run.then(
      () => undefined,
      (err: unknown) => this.o.log.error({ err, partition }, `${this.o.name}: partition reader stopped`),
    );
    // A start that fails (JetStream too slow to answer) is thrown to the caller, whose lease
    // is then given up and taken again: a reader left registered would hold the partition
    // and read nothing.
    const outcome = await Promise.race([started.then(() => "ready" as const), run.then(() => "ended" as const, (err: unknown) => err)]);
    if (outcome === "ready" || outcome === "ended") return;
    if (this.readers.get(partition) === reader) this.readers.delete(partition);
    throw outcome;
  }

  /** Stops reading `partition`; messages of its open pull not yet read come again to the next holder. */
  async remove(partition: number): Promise<void> {
    const reader = this.readers.get(partition);
    if (!reader) return;
    this.readers.delete(partition);
    reader.stopped = true;
    reader.pull?.stop();
    await reader.done;
  }

  async removeAll(): Promise<void> {
    await Promise.all(this.held().map((p) => this.remove(p)));
  }

  private async run(partition: number, epoch: number, reader: Reader, ready: () => void): Promise<void> {
    const { js, jsm, stream } = this.o;
    const { family, filter } = this.o.durable(partition);
    const name = `${family}${epoch}`;
    const config: DurableConfig = { ack_policy: AckPolicy.Explicit, ack_wait: 60_000_000_000, max_ack_pending: 20_000, max_deliver: -1, ...this.o.config, durable_name: name, filter_subject: filter };
    // What the previous holder took and did not acknowledge comes first, in order.
    await takeOverDurable(jsm, stream, family, config);
    if (reader.stopped) return;
    const consumer = await js.consumers.get(stream, name);
    // Pulls expire after 5 s, not nats.js's 30: a pull the server had closed under a
    // backlog once stalled the client until it expired.
    const pull = new PacedPull(consumer, {
      pullBytes: this.o.pullBytes,
      expires: 5_000,
      room: this.o.room,
      onError: (err) => this.o.log.warn({ err, partition }, `${this.o.name}: pull failed; pulling again`),
    });
    reader.pull = pull;
    if (reader.stopped) return;
    ready();
    let since = performance.now();
    for await (const m of pull) {
      if (reader.stopped) break;
      this.o.dispatch(m, partition);
      // A pull's buffered messages come through microtasks, which never let the event loop
      // turn: Redis replies, lease renewals and timers would wait behind thousands of
      // dispatches (and time out). Yielding every few ms keeps them prompt.
      if (performance.now() - since > YIELD_EVERY_MS) {
        await new Promise((r) => setImmediate(r));
        since = performance.now();
      }
    }
  }
}
