import type { NatsConnection } from "@nats-io/transport-node";
import type { ClickHouseClient } from "@clickhouse/client";
import { ClickHouseProjector } from "../actors/clickhouse-projector.js";
import { JobRunner } from "../actors/ingestion/job-runner.js";
import type { StageDeps } from "../actors/ingestion/stage-deps.js";
import type { JobStore } from "../src/ingestion/job-store.js";
import type { InsertEncodedRows } from "../infra/clickhouse/client.js";
import { serveClickHouseRpc } from "../infra/clickhouse/rpc.js";
import { copiedThrough } from "../infra/clickhouse/schema.js";
import { HeapGrowthCap } from "../infra/heap-growth-cap.js";
import type { PublishedMessages } from "../infra/nats/published-messages.js";
import type { Topology } from "../infra/nats/topology.js";
import type { Redis } from "../infra/redis/connection.js";
import type { Config } from "../src/config.js";
import type { PatientLogMessage } from "../src/logs/log-writer.js";
import type { LeasedTask } from "./leased-work.js";

interface Logger {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
}

/**
 * The `projector` lease's work: a projector per tenure, reading on from what the copy
 * holds (see ClickHouseProjector.start), and, for embedded ClickHouse, the query service
 * every member's api processes reach the copy through.
 */
export function projectorTask(d: {
  config: Config;
  nc: NatsConnection;
  topology: Topology;
  redis: Redis;
  client: ClickHouseClient;
  insertRows: InsertEncodedRows;
  embedded: boolean;
  published?: PublishedMessages<PatientLogMessage>;
  log: Logger;
}): { task: LeasedTask; current(): ClickHouseProjector | null; counts: { readonly rows: number } } {
  const ns = d.config.namespace;
  let projector: ClickHouseProjector | null = null;
  let rpc: { unsubscribe(): void }[] = [];
  // Rows projected by this process over all its tenures.
  let before = 0;
  const counts = {
    get rows(): number {
      return before + (projector?.stats.rows ?? 0);
    },
  };
  const task: LeasedTask = {
    start: async (epoch) => {
      const { js, jsm, names } = d.topology;
      const p = new ClickHouseProjector(
        { js, jsm, names, insertRows: d.insertRows, database: ns, redis: d.redis, redisPrefix: ns, log: d.log, ...(d.published ? { published: d.published } : {}) },
        `${ns}_clickhouse_${epoch}`,
      );
      await p.start({ after: await copiedThrough(d.client, ns), family: `${ns}_clickhouse` });
      projector = p;
      if (d.embedded) rpc = serveClickHouseRpc(d.nc, ns, d.client);
    },
    stop: async () => {
      for (const r of rpc) r.unsubscribe();
      rpc = [];
      const p = projector;
      projector = null;
      await p?.stop();
      before += p?.stats.rows ?? 0;
    },
  };
  return { task, current: () => projector, counts };
}

/**
 * The `jobs` lease's work: a job runner per tenure, resuming every job from its snapshot,
 * its saves fenced on the tenure's epoch, answering control on the tenure's subject.
 */
export function jobsTask(d: {
  config: Config;
  nc: NatsConnection;
  runner: StageDeps & { store: JobStore };
  controlSubject: (epoch: number) => string;
}): { task: LeasedTask; current(): JobRunner | null } {
  let runner: JobRunner | null = null;
  const task: LeasedTask = {
    start: async (epoch) => {
      const r = new JobRunner(
        d.runner,
        {
          confirmTimeoutMs: d.config.jobConfirmTimeoutMs,
          maxRunning: d.config.maxRunningJobs,
          heapCap: HeapGrowthCap.setByOperator() ? undefined : new HeapGrowthCap(d.config.jobHeapGrowthPercent),
          epoch,
        },
      );
      await r.start();
      r.serve(d.nc, d.controlSubject(epoch));
      runner = r;
    },
    stop: async () => {
      const r = runner;
      runner = null;
      await r?.stop();
    },
  };
  return { task, current: () => runner };
}
