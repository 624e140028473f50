import { AckPolicy, DeliverPolicy, type Consumer, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { InsertEncodedRows } from "../infra/clickhouse/client.js";
import { encodeRow, insertLogRows, LOG_COLUMNS } from "../infra/clickhouse/log-rows.js";
import type { TopologyNames } from "../infra/nats/topology.js";
import { projectedSeqKey } from "../infra/clickhouse/schema.js";
import type { Redis } from "../infra/redis/connection.js";
import type { LogRecord } from "../readmodels/log-record.js";
import type { PatientLogMessage } from "../src/logs/log-writer.js";
import { PacedPull } from "../infra/nats/paced-pull.js";
import { durableFromAckFloor, durablesOf, ensureDurable, type DurableConfig } from "../infra/nats/durable-consumer.js";
import { EncodedRows, RowBufferPool } from "../infra/clickhouse/encoded-rows.js";
import type { PublishedMessageReader, PublishedMessages } from "../infra/nats/published-messages.js";
import { decodeLogMessage, logSubjectOwner } from "../src/logs/stored-message.js";
import { idsOfRow, insertSettingAside, SetAsideLetters, type RowInserts, type SetAsideLog } from "./refused-rows.js";
import { errorClass } from "../src/error-class.js";

interface Logger {
  error(obj: unknown, msg?: string): void;
}

/**
 * Messages taken from the consumer, waiting for their insert: encoded rows (one line per
 * log), the last message (ack all), and the dead letters of logs set aside, stored before
 * the ack.
 */
interface Pending {
  rows: EncodedRows;
  last: JsMsg;
  since: number;
  letters: SetAsideLetters;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** An insert of no rows: whether ClickHouse takes inserts at all. */
const NO_ROWS = Buffer.alloc(0);
/** While inserts keep failing, one log line per this many ms (they are retried every second). */
const FAILURE_LOG_EVERY_MS = 60_000;

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
 *
 * No log can hold the stream back: a row ClickHouse refuses is found by cutting the failed
 * batch in halves (insertSettingAside), set aside in its project's dead letters (reason
 * `not_queryable`), and the rest goes in; a message on a log subject that the service did
 * not write is passed over (the state engine parks it). The batch is acknowledged only
 * once its letters are stored, so a crash never loses one; the letters of a batch that
 * comes again are named as before, and filed once within the dead-letter stream's
 * duplicate window.
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
  /** `set_aside`: logs ClickHouse refused (dead-lettered); `skipped`: messages the service did not write; `insert_failures`: failed inserts retried. */
  readonly stats = { batches: 0, rows: 0, set_aside: 0, skipped: 0, insert_failures: 0 };
  private lastFailureLog = -Infinity;
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

  private consumerConfig(): DurableConfig {
    return { durable_name: this.consumer, ack_policy: AckPolicy.All, ack_wait: ACK_WAIT_MS * 1_000_000, max_ack_pending: 200_000 };
  }

  /**
   * Starts copying. `after`: the highest stream sequence the copy already holds (a member
   * taking the projector over reads its own copy's, so an embedded copy that missed
   * another member's tenure is filled from the stream): every durable of `family` (the
   * previous holders') is deleted and this one made to deliver from the next sequence, so a
   * previous holder that has not noticed its lease lapsed reads nothing more. Without it,
   * the durable goes on from its ack floor.
   */
  async start(takeOver?: { after: number; family: string }): Promise<void> {
    const { jsm, names } = this.deps;
    if (takeOver) {
      for (const c of await durablesOf(jsm, names.logsStream, takeOver.family)) await jsm.consumers.delete(names.logsStream, c.name).catch(() => undefined);
      const after = takeOver.after;
      await jsm.consumers.add(names.logsStream, { ...this.consumerConfig(), ...(after > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 } : { deliver_policy: DeliverPolicy.All }) });
      this.projectedSeq = after;
    } else await ensureDurable(jsm, names.logsStream, { ...this.consumerConfig(), deliver_policy: DeliverPolicy.All });
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
    const p = (this.pending ??= { rows: new EncodedRows(this.rowBuffers), last: m, since: performance.now(), letters: new SetAsideLetters(this.deps.names) });
    for (const l of this.published?.take(seq)?.logs ?? this.decode(m)) {
      try {
        p.rows.push(encodeRow(l, seq));
      } catch (err) {
        // A payload nested too deep to encode (RangeError): it can only have been forged.
        const ids = { organization_id: l.organization_id, project_id: l.project_id, patient_id: l.patient_id, log_id: l.id, log_type: l.log_type, stream_seq: seq };
        this.setAside(p, ids, err);
      }
    }
    p.last = m;
    return true;
  }

  /** A message another process wrote, or one delivered again: parsed and checked as every reader of the stream checks it. */
  private decode(m: JsMsg): LogRecord[] {
    const owner = logSubjectOwner(this.deps.names, m.subject);
    const body = owner ? decodeLogMessage(m.data, owner) : null;
    if (body && body.unreadable === undefined) return body.logs;
    // The service did not write it: the state engine parks it in the dead letters; here it is only passed over.
    this.stats.skipped++;
    const why = body?.unreadable ?? "the subject names no organization, project and patient";
    this.deps.log.error({ seq: m.info.streamSequence, why }, "clickhouse projector: passed over a log message the service did not write");
    return [];
  }

  /** Records a log the log query cannot hold: its letter is stored before the batch is acknowledged. */
  private setAside(p: Pending, log: SetAsideLog, err: unknown): void {
    this.stats.set_aside++;
    this.deps.log.error({ log_id: log.log_id, stream_seq: log.stream_seq, ...errorClass(err) }, "clickhouse projector: a log the log query cannot hold is set aside in its project's dead letters (not_queryable)");
    p.letters.add(log, err);
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
    // Every row lands or is set aside before the ack: acking a later batch would ack this
    // one too (ack all), so moving on would lose it. A stop leaves it unacked, to come again.
    if (p.rows.rows > 0 && !(await insertSettingAside(p.rows.toBuffer(), this.insertsOf(p)))) return;
    const stored = await p.letters.store(this.deps.js, () => this.running, (err) => this.deps.log.error(errorClass(err), "clickhouse projector: storing a dead letter failed; retrying"));
    if (!stored) return;
    p.rows.release();
    p.last.ack();
    this.projectedSeq = p.last.seq;
    this.stats.batches++;
    this.stats.rows += p.rows.rows;
    await this.deps.redis.set(projectedSeqKey(this.deps.redisPrefix), String(p.last.seq)).catch(() => undefined);
  }

  private insertsOf(p: Pending): RowInserts {
    const { insertRows, database } = this.deps;
    return {
      insert: (rows) => insertLogRows(insertRows, database, rows),
      answers: () => insertLogRows(insertRows, database, NO_ROWS).then(() => true, () => false),
      running: () => this.running,
      pause: (err, rows) => this.pauseAfterFailure(err, rows),
      refused: (row, err) => this.setAside(p, idsOfRow(row, LOG_COLUMNS), err),
    };
  }

  /** After an insert failed with no row to blame (ClickHouse down): a second's wait, and a log line a minute, without the rows. */
  private async pauseAfterFailure(err: unknown, rows: number): Promise<void> {
    this.stats.insert_failures++;
    const now = performance.now();
    if (now - this.lastFailureLog >= FAILURE_LOG_EVERY_MS) {
      this.lastFailureLog = now;
      this.deps.log.error({ ...errorClass(err), rows, failures: this.stats.insert_failures }, "clickhouse insert failed; retrying every second (logged once a minute)");
    }
    await sleep(1_000);
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
