import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { ClickHouseClient } from "@clickhouse/client";
import type { TopologyNames } from "../infra/nats/topology.js";
import type { Redis } from "../infra/redis.js";
import type { LogRecord } from "../readmodels/log-record.js";
import type { PatientLogMessage } from "../src/logs/log-writer.js";

/** One row of the ClickHouse `logs` table (infra/clickhouse-schema.ts). */
export interface LogRow {
  organization_id: string;
  project_id: string;
  patient_id: string;
  id: string;
  type: string;
  timestamp: string;
  ingested_at: string;
  trace: string;
  idempotency_key: string;
  payload: string;
  stream_seq: number;
}

export function toRow(l: LogRecord, seq: number): LogRow {
  return {
    organization_id: l.organization_id,
    project_id: l.project_id,
    patient_id: l.patient_id,
    id: l.id,
    type: l.log_type,
    timestamp: l.timestamp,
    ingested_at: l.ingested_at,
    trace: l.trace === undefined ? "" : typeof l.trace === "string" ? l.trace : `${l.trace.object_type}:${l.trace.object_id}`,
    idempotency_key: l.idempotency_key ?? "",
    payload: JSON.stringify(l.payload),
    stream_seq: seq,
  };
}

interface Logger {
  error(obj: unknown, msg?: string): void;
}

/**
 * Copies every stored log into ClickHouse for the log query builder: a durable consumer
 * (ack all) read in batches, one insert per batch, then one ack for the batch. A batch
 * delivered twice (a crash between insert and ack) inserts the same rows again, and the
 * ReplacingMergeTree keyed on the log id keeps one of each (queries read FINAL).
 */
export class ClickHouseProjector {
  private running = false;
  private loop: Promise<void> | null = null;
  /** Highest stream sequence whose logs are in ClickHouse (everything below it is too). */
  projectedSeq = 0;
  readonly stats = { batches: 0, rows: 0 };

  constructor(
    private readonly deps: {
      js: JetStreamClient;
      jsm: JetStreamManager;
      names: TopologyNames;
      client: ClickHouseClient;
      database: string;
      redis: Redis;
      redisPrefix: string;
      log: Logger;
    },
    private readonly consumer: string,
    private readonly batchMax = 5_000,
  ) {}

  /** Redis key holding projectedSeq, for processes that do not run the projector. */
  static progressKey(prefix: string): string {
    return `${prefix}:projected`;
  }

  async start(): Promise<void> {
    const { jsm, js, names } = this.deps;
    await jsm.consumers
      .add(names.logsStream, { durable_name: this.consumer, ack_policy: AckPolicy.All, deliver_policy: DeliverPolicy.All, ack_wait: 60_000_000_000, max_ack_pending: 200_000 })
      .catch((err) => {
        if (!String(err.message).includes("already in use") && !String(err.message).includes("exists")) throw err;
      });
    const c = await js.consumers.get(names.logsStream, this.consumer);
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        try {
          const batch = await c.fetch({ max_messages: this.batchMax, expires: 1_000 });
          const rows: LogRow[] = [];
          let last: import("@nats-io/jetstream").JsMsg | null = null;
          for await (const m of batch) {
            for (const l of m.json<PatientLogMessage>().logs) rows.push(toRow(l, m.seq));
            last = m;
          }
          if (!last) continue;
          // Retry this batch until it lands: acking a later batch would ack this one too
          // (ack all), so moving on would lose it.
          while (rows.length > 0 && !(await this.insert(rows)) && this.running) await new Promise((r) => setTimeout(r, 1_000));
          if (!this.running) break;
          last.ack();
          this.projectedSeq = last.seq;
          this.stats.batches++;
          this.stats.rows += rows.length;
          await this.deps.redis.set(ClickHouseProjector.progressKey(this.deps.redisPrefix), String(last.seq)).catch(() => undefined);
        } catch (err) {
          if (!this.running) break;
          // A fetch failed (NATS reconnecting): nothing was acked, so nothing is lost.
          this.deps.log.error({ err }, "clickhouse projector fetch failed; retrying");
          await new Promise((r) => setTimeout(r, 1_000));
        }
      }
    })();
  }

  private async insert(rows: LogRow[]): Promise<boolean> {
    try {
      await this.deps.client.insert({
        table: `${this.deps.database}.logs`,
        values: rows,
        format: "JSONEachRow",
        clickhouse_settings: { date_time_input_format: "best_effort" },
      });
      return true;
    } catch (err) {
      this.deps.log.error({ err, rows: rows.length }, "clickhouse insert failed; retrying");
      return false;
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}
