import { AckPolicy, DeliverPolicy, type Consumer, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { InsertEncodedRows } from "../infra/clickhouse.js";
import type { TopologyNames } from "../infra/nats/topology.js";
import type { Redis } from "../infra/redis.js";
import { traceText, type LogRecord } from "../readmodels/log-record.js";
import type { PatientLogMessage } from "../src/logs/log-writer.js";
import { numericCopy } from "../readmodels/query/numeric-copy.js";
import { PacedPull } from "../infra/nats/paced-pull.js";
import { durableFromAckFloor, ensureDurable, type DurableConfig } from "../infra/nats/durable-consumer.js";
import { EncodedRows, RowBufferPool } from "./encoded-rows.js";
import type { PublishedMessageReader, PublishedMessages } from "../infra/nats/published-messages.js";

/** The columns an insert names, in the order of encodeRow's values. */
const LOG_COLUMNS = ["organization_id", "project_id", "patient_id", "id", "type", "timestamp", "ingested_at", "trace", "trace_type", "idempotency_key", "payload", "payload_numbers", "stream_seq"] as const;

/**
 * One log as a row of the ClickHouse `logs` table (infra/clickhouse-schema.ts): a
 * JSONCompactEachRow line, the values in LOG_COLUMNS order. Without a key per value,
 * ClickHouse spent about a fifth less CPU per inserted row than on JSONEachRow (the same
 * rows stored), and the line is shorter to build and hold. `payload` goes as the log's
 * payload object: the JSON formats read an object into a String column as its JSON text
 * (input_format_json_read_objects_as_strings, on by default), so the text is written once,
 * by the JSON.stringify that encodes the row. `payload_numbers` is the payload pruned to
 * its numbers, from which ClickHouse computes `payload_json` (migration 3); it is never
 * stored itself.
 */
export function encodeRow(l: LogRecord, seq: number): string {
  return JSON.stringify([
    l.organization_id, l.project_id, l.patient_id, l.id, l.log_type, l.timestamp, l.ingested_at, traceText(l.trace) ?? "", typeof l.trace === "object" ? l.trace.object_type : "", l.idempotency_key ?? "",
    l.payload, numericCopy(l.payload), seq,
  ]);
}

/** Settings of every insert into `logs` (timestamps are ISO 8601 with Z; payload objects read as their text). */
export const LOG_INSERT_SETTINGS = { date_time_input_format: "best_effort", input_format_json_read_objects_as_strings: 1 } as const;

/**
 * Inserts JSONCompactEachRow lines (one `encodeRow` line per log, each ending in "\n").
 * The columns are named: an EPHEMERAL column (payload_numbers) is only read when listed.
 */
export async function insertLogRows(insertRows: InsertEncodedRows, database: string, rows: Buffer): Promise<void> {
  await insertRows(`${database}.logs`, LOG_COLUMNS, rows, LOG_INSERT_SETTINGS);
}

interface Logger {
  error(obj: unknown, msg?: string): void;
}

/** Messages taken from the consumer, waiting for their insert: encoded rows (one line per log) and the last message (ack all). */
interface Pending {
  rows: EncodedRows;
  last: JsMsg;
  since: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long JetStream waits for an ack before delivering again (the durable's ack_wait). */
const ACK_WAIT_MS = 60_000;
/**
 * Bytes one pull should bring. nats-server drops messages for a client whose unread output
 * passes its max_pending (64 MB by default: "slow consumer"), and with ack-all a dropped
 * message would be acknowledged by the next batch's ack. Pulls of a few MB keep far below.
 */
const PULL_BYTES = 8 * 1024 * 1024;

/**
 * Copies every stored log into ClickHouse for the log query builder. A durable consumer
 * (ack all) is read continuously; its logs are encoded as rows (encodeRow) while they
 * arrive and inserted in batches, one insert at a time: a batch goes when the previous
 * insert is done and either `batchMax` logs are waiting or the oldest has waited
 * `lingerMs`. So reading and encoding the next batch overlaps the insert of the current
 * one (ClickHouse works on its own threads), batches grow with the load, and a quiet
 * stream is still copied within about `lingerMs`. After each insert, one ack (of the
 * batch's last message) acknowledges the whole batch.
 *
 * A batch delivered twice (a crash between insert and ack) inserts the same rows again,
 * and the ReplacingMergeTree keyed on the log id keeps one of each (queries read FINAL).
 */
export class ClickHouseProjector {
  private running = false;
  private loop: Promise<void> | null = null;
  private messages: PacedPull | null = null;
  private pending: Pending | null = null;
  /** The insert (and ack) in progress, if any; batches commit strictly one after another. */
  private committing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Delivery sequence of the last message taken in this read; 0 at the start of one. */
  private lastDelivery = 0;
  /** Highest stream sequence whose logs are in ClickHouse (everything below it is too). */
  projectedSeq = 0;
  readonly stats = { batches: 0, rows: 0 };
  private readonly published: PublishedMessageReader<PatientLogMessage> | undefined;
  /** The buffers batches are encoded into, reused once their insert is done. */
  private readonly rowBuffers = new RowBufferPool();

  constructor(
    private readonly deps: {
      js: JetStreamClient;
      jsm: JetStreamManager;
      names: TopologyNames;
      insertRows: InsertEncodedRows;
      database: string;
      redis: Redis;
      redisPrefix: string;
      log: Logger;
      /** Messages this process's write path stored, as objects: what it hands over is not parsed again. */
      published?: PublishedMessages<PatientLogMessage>;
    },
    private readonly consumer: string,
    private readonly batchMax = 20_000,
    private readonly lingerMs = 100,
  ) {
    this.published = deps.published?.reader();
  }

  /** Redis key holding projectedSeq, for processes that do not run the projector. */
  static progressKey(prefix: string): string {
    return `${prefix}:projected`;
  }

  private consumerConfig(): DurableConfig {
    return { durable_name: this.consumer, ack_policy: AckPolicy.All, ack_wait: ACK_WAIT_MS * 1_000_000, max_ack_pending: 200_000 };
  }

  async start(): Promise<void> {
    const { jsm, names } = this.deps;
    await ensureDurable(jsm, names.logsStream, { ...this.consumerConfig(), deliver_policy: DeliverPolicy.All });
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          // What the last read took and did not insert comes again from the ack floor.
          await this.committing;
          this.dropPending();
          const c = await this.consumerFromAckFloor();
          this.lastDelivery = 0;
          let lost = false;
          // Pulled on demand (see PacedPull), not with consume(): consume() pulls again as
          // messages arrive, so while a full batch waits for its insert, a backlog would
          // pile up in the client, up to max_ack_pending (200,000 messages). Here the next
          // pull waits until the loop asks for the next message.
          this.messages = new PacedPull(c, {
            pullBytes: PULL_BYTES,
            expires: 5_000,
            room: () => Promise.resolve(),
            onError: (err) => this.deps.log.error({ err }, "clickhouse projector pull failed; pulling again"),
          });
          for await (const m of this.messages) {
            if (!this.take(m)) {
              lost = true;
              break;
            }
            // Backpressure: with a full batch waiting behind an insert, wait for the insert.
            if (this.pending && this.pending.rows.rows >= this.batchMax && this.committing) await this.committing;
            this.maybeFlush();
          }
          if (lost) await this.recoverFromLostDeliveries();
        } catch (err) {
          if (!this.running) break;
          // Reading failed (NATS reconnecting): whatever was taken is unacked and comes again.
          this.deps.log.error({ err }, "clickhouse projector read failed; retrying");
          await sleep(1_000);
        }
      }
    })();
  }

  /** The durable, reading from its first unacknowledged message (see durableFromAckFloor). */
  private async consumerFromAckFloor(): Promise<Consumer> {
    const { jsm, js, names } = this.deps;
    const pending = await durableFromAckFloor(jsm, names.logsStream, this.consumerConfig());
    if (pending > 0) this.deps.log.error({ pending }, "clickhouse projector: reading again from the first unacknowledged message");
    return js.consumers.get(names.logsStream, this.consumer);
  }

  /**
   * Encodes a message's logs as they arrive, so the insert finds the text ready. Refuses a
   * message that does not follow the last one taken (a delivery was lost on the way): no
   * ack may then pass the gap.
   */
  private take(m: JsMsg): boolean {
    const { deliverySequence, streamSequence: seq } = m.info;
    if (this.lastDelivery !== 0 && deliverySequence !== this.lastDelivery + 1) return false;
    this.lastDelivery = deliverySequence;
    const p = (this.pending ??= { rows: new EncodedRows(this.rowBuffers), last: m, since: performance.now() });
    for (const l of (this.published?.take(seq) ?? m.json<PatientLogMessage>()).logs) p.rows.push(encodeRow(l, seq));
    p.last = m;
    return true;
  }

  /**
   * A delivery went missing: acks stop at the gap. The batch already inserting is complete
   * and may be acknowledged; what was taken after it is dropped, and the next read starts
   * from the first unacknowledged message (consumerFromAckFloor).
   */
  private async recoverFromLostDeliveries(): Promise<void> {
    this.deps.log.error({ after: this.lastDelivery }, "clickhouse projector: a delivery was lost in transit; reading again from the ack floor");
    this.dropPending();
    this.messages?.stop();
    await this.committing;
  }

  private dropPending(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending?.rows.release();
    this.pending = null;
  }

  /** Starts the next insert when none is running and the batch is full or old enough; else arms a timer. */
  private maybeFlush(): void {
    const p = this.pending;
    if (!p || this.committing || !this.running) return;
    const age = performance.now() - p.since;
    if (p.rows.rows < this.batchMax && age < this.lingerMs) {
      this.timer ??= setTimeout(() => {
        this.timer = null;
        this.maybeFlush();
      }, this.lingerMs - age);
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = null;
    this.committing = this.commit(p).finally(() => {
      this.committing = null;
      this.maybeFlush();
    });
  }

  private async commit(p: Pending): Promise<void> {
    const rows = p.rows.toBuffer();
    // Retry this batch until it lands: acking a later batch would ack this one too (ack
    // all), so moving on would lose it. A stop leaves it unacked, to come again.
    while (p.rows.rows > 0 && !(await this.insert(rows, p.rows.rows))) {
      if (!this.running) return;
      await sleep(1_000);
    }
    p.rows.release();
    p.last.ack();
    this.projectedSeq = p.last.seq;
    this.stats.batches++;
    this.stats.rows += p.rows.rows;
    await this.deps.redis.set(ClickHouseProjector.progressKey(this.deps.redisPrefix), String(p.last.seq)).catch(() => undefined);
  }

  private async insert(encoded: Buffer, rows: number): Promise<boolean> {
    try {
      await insertLogRows(this.deps.insertRows, this.deps.database, encoded);
      return true;
    } catch (err) {
      this.deps.log.error({ err, rows }, "clickhouse insert failed; retrying");
      return false;
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.messages?.stop();
    await this.loop;
    await this.committing;
    this.pending = null;
  }
}
