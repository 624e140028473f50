import type { NatsConnection } from "@nats-io/transport-node";
import type { ClickHouseClient } from "@clickhouse/client";
import { connectNats } from "../infra/nats/connection.js";
import { ensureTopology, type Topology } from "../infra/nats/topology.js";
import type { MigrationOptions } from "../infra/nats/log-migration.js";
import type { MigrationLog } from "../infra/nats/migration-lock.js";
import { createJetStreamPublisher, type JetStreamPublisher } from "../infra/nats/jetstream-publisher.js";
import { PublishedMessages } from "../infra/nats/published-messages.js";
import { JsonKv } from "../infra/nats/json-kv.js";
import { entryValue, watchKeys } from "../infra/nats/kv-invalidation.js";
import { connectRedis, type Redis } from "../infra/redis/connection.js";
import { createClickHouse, type InsertEncodedRows } from "../infra/clickhouse/client.js";
import { pingClickHouseRpc } from "../infra/clickhouse/rpc.js";
import { InstanceStatus } from "../infra/metrics/instance-status.js";
import { ProcessMetrics } from "../infra/metrics/process-metrics.js";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Config, Role } from "../src/config.js";
import { OrganizationStore } from "../src/control/organizations.js";
import { ProjectStore, type Project } from "../src/control/projects.js";
import { ApiKeyStore, type ApiKey } from "../src/control/api-keys.js";
import { AuditLog } from "../src/audit/audit-log.js";
import type { PatientStore } from "../src/control/patients.js";
import { TokenService } from "../src/auth/tokens.js";
import { loadJwtSecret } from "../src/auth/jwt-secret.js";
import type { IdempotencyLedger } from "../src/logs/idempotency-ledger.js";
import type { LogWriter, PatientLogMessage } from "../src/logs/log-writer.js";
import { openWritePath } from "../src/logs/log-writer-wiring.js";
import { bootstrapAdmin } from "../src/control/bootstrap.js";
import type { PatientStateStore } from "../infra/redis/state-store.js";
import { StateEngine } from "../actors/state-engine.js";
import { DeviceFeed } from "../actors/device-feed.js";
import type { ClickHouseProjector } from "../actors/clickhouse-projector.js";
import { migrate } from "../infra/clickhouse/schema.js";
import { LeasedWork, partitionResource, type LeasedTask } from "./leased-work.js";
import { jobsTask, projectorTask } from "./leased-tasks.js";
import { partitionOf } from "../infra/nats/partitions.js";
import { PatientLog } from "../src/logs/patient-log.js";
import { leaseEpochReader } from "../infra/nats/lease-bucket.js";
import { StateReader } from "../src/state/state-reader.js";
import { HorizonReader } from "../src/state/as-of-read.js";
import { LogQueryService } from "../src/query/log-query-service.js";
import type { JobRunner } from "../actors/ingestion/job-runner.js";
import { ReplayThread } from "../actors/ingestion/replay-thread.js";
import type { StageDeps } from "../actors/ingestion/stage-deps.js";
import { JobStore } from "../src/ingestion/job-store.js";
import { UploadStore, uploadIssuerCheck } from "../src/ingestion/uploads.js";
import { IngestionService } from "../src/ingestion/service.js";

/** Everything the HTTP app and the background work need, built once and passed in (no singletons). */
export interface Services {
  config: Config;
  nc: NatsConnection;
  topology: Topology;
  publisher: JetStreamPublisher;
  redis: Redis;
  /** Null client: embedded ClickHouse is owned by another process of this service (the worker). */
  clickhouse: { client: ClickHouseClient | null; embedded: boolean; insertRows?: InsertEncodedRows; ping(): Promise<void> };
  orgs: OrganizationStore;
  projects: ProjectStore;
  apiKeys: ApiKeyStore;
  patients: PatientStore;
  tokens: TokenService;
  /** The append-only audit trail (stream {NS}_AUDIT). */
  audit: AuditLog;
  ledger: IdempotencyLedger;
  /** Clients' log ids (the SDK's `log_id`), claimed per acceptance day. */
  logIds: IdempotencyLedger;
  logWriter: LogWriter;
  stateStore: PatientStateStore;
  stateReader: StateReader;
  /** State reads at a horizon (as_of, known_at), folded from the log. */
  horizonReader: HorizonReader;
  logQuery: LogQueryService;
  /** This process, as /healthz reports it: the lease table and the engine's partitions register into it. */
  instance: InstanceStatus;
  /** This process's metrics (its own registry; /metrics gathers the member's). */
  metrics: ProcessMetrics;
  /** Present in the process that applies logs to state (role "all" or "worker"). */
  engine: StateEngine | null;
  /** Present in the process that owns ClickHouse writes (role "all" or "worker"). */
  projector: ClickHouseProjector | null;
  /** The device feed's consumer (role "all" or "worker"). */
  deviceFeed: DeviceFeed | null;
  /**
   * What the write path hands this process's engine and projector (roles "all" and
   * "worker", whose device feed and jobs write): an optimization only, as they read every
   * message from the stream too.
   */
  published: PublishedMessages<PatientLogMessage> | null;
  /** Ingestion jobs: uploads, creation, reads, control (the routes' side). */
  ingestion: IngestionService;
  /** Present in the process that runs ingestion jobs (role "all" or "worker"). */
  jobRunner: JobRunner | null;
  /**
   * Stops the background work (gives its leases up, each task stopped first); the HTTP
   * side keeps its connections. Once: close() calls it too.
   */
  stopBackground(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What this process does: "api" (HTTP and MCP, no background work), "worker" (the
 * background work and the embedded ClickHouse, no HTTP), or "all" (both in one process:
 * tests and benches that build the service in-process; `npm start` runs "all" as separate
 * api and worker processes, app/supervisor.ts).
 */
export type ProcessRole = Role;

function openClickHouse(config: Config, nc: NatsConnection, role: ProcessRole): Services["clickhouse"] {
  if (role === "api" && !config.clickhouseUrl) {
    return { client: null, embedded: true, ping: () => pingClickHouseRpc(nc, config.namespace) };
  }
  const { client, embedded, insertRows } = createClickHouse({ url: config.clickhouseUrl, dataDir: config.dataDir });
  return {
    client,
    embedded,
    insertRows,
    async ping() {
      const r = await client.ping();
      if (!r.success) throw r.error;
    },
  };
}

export interface ServiceOptions {
  log?: { error(o: unknown, m?: string): void; warn(o: unknown, m?: string): void; info?(o: unknown, m?: string): void };
  /** A first-layout namespace's migration settings (tests shorten its waits). */
  migration?: Partial<MigrationOptions>;
  /** Test hooks of the ingestion job stages (for example a slow replay to stop a job midway). */
  ingestion?: Pick<StageDeps, "beforeReplayChunk" | "backfillStallMs" | "bucketBytes" | "storageRetryMs">;
}

/** The process's logger for a log layout migration; console when it has no info level. */
function migrationLog(log: ServiceOptions["log"]): MigrationLog | undefined {
  if (!log?.info) return undefined;
  return { info: (o, m) => log.info?.(o, m), warn: (o, m) => log.warn(o, m) };
}

export async function createServices(config: Config, role: ProcessRole = "all", options: ServiceOptions = {}): Promise<Services> {
  const nc = await connectNats(config);
  const stops: (() => void)[] = [];
  try {
    const topology = await ensureTopology(nc, config.namespace, { partitions: config.partitions, log: migrationLog(options.log), ...(options.migration ? { migration: options.migration } : {}) });
    const publisher = createJetStreamPublisher(nc, { timeoutMs: config.publishTimeoutMs });
    const instance = new InstanceStatus(`${hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`, role, process.pid);
    const metrics = new ProcessMetrics(instance);
    const redis = await connectRedis(config.redisUrl, config.redisCommandTimeoutMs);
    const clickhouse = openClickHouse(config, nc, role);
    const kv = topology.kv;
    const orgs = new OrganizationStore(new JsonKv(kv.orgs));
    const projects = new ProjectStore(new JsonKv(kv.projects), new JsonKv(kv.slugs));
    const apiKeys = new ApiKeyStore(new JsonKv(kv.apiKeys), new JsonKv(kv.apiKeyHashes));
    stops.push(await watchKeys(kv.orgs, (e) => orgs.invalidate(e.key)));
    // Revocations and deprecations made by any instance reach this one's caches at once.
    stops.push(await watchKeys(kv.apiKeys, (e) => apiKeys.refresh(e.key, entryValue<ApiKey>(e), e.revision)));
    stops.push(await watchKeys(kv.projects, (e) => projects.refresh(e.key, entryValue<Project>(e), e.revision)));
    const tokens = new TokenService(await loadJwtSecret(config, new JsonKv(kv.config), options.log ?? console));
    const audit = new AuditLog({ publisher, js: topology.js, jsm: topology.jsm, names: topology.names }, { maxPayload: nc.info?.max_payload });
    // Only where the engine and projector run beside the write path: they take what it stored
    // without parsing it again. Under tests every handed-over message is frozen, so a reader
    // that writes into one fails there.
    const published = role === "api" ? undefined : new PublishedMessages<PatientLogMessage>(16 * 1024 * 1024, process.env.NODE_ENV === "test");
    const { patients, ledger, logIds, stateStore, writer: logWriter } = await openWritePath({ nc, topology, publisher, redis, config, outcomes: metrics, ...(published ? { published } : {}) }, stops);
    if (config.adminKey) await bootstrapAdmin({ orgs, projects, apiKeys }, config.adminKey);
    const touchSubject = `${config.namespace}.engine.touch`;
    const patientLog = new PatientLog(topology);
    let engine: StateEngine | null = null;
    let deviceFeed: DeviceFeed | null = null;
    const stateReader = new StateReader({
      store: stateStore,
      patients,
      options: { maxWaitMs: config.readWaitMs },
      // null when the subject holds nothing; a JetStream that does not answer throws (a
      // 503), as an empty answer would serve a patient with history as one without.
      lastStoredSeq: async (scope, pid) => {
        return patientLog.lastSeq({ organization_id: scope.organization_id, project_id: scope.project_id, patient_id: pid });
      },
      touch: async (input, replay) => {
        if (engine?.works(input.patient_id)) engine.touch(input, replay);
        else await nc.request(`${touchSubject}.${partitionOf(input.patient_id, topology.names.partitions)}`, JSON.stringify({ ...input, replay }), { timeout: 2_000 }).catch(() => undefined);
      },
    });
    const jobStore = new JobStore(new JsonKv(kv.ingestionJobs), new JsonKv(kv.ingestionKeys));
    const uploads = new UploadStore({ os: topology.uploads, js: topology.js, publisher, bucket: topology.names.uploadsBucket, tokens: new JsonKv(kv.uploadTokens) });
    // One subject per tenure of the `jobs` lease (`{ns}.ingestion.control.{epoch}`): see IngestionService.
    const controlSubject = (epoch: number) => `${config.namespace}.ingestion.control.${epoch}`;
    const jobsEpoch = leaseEpochReader(nc, config.namespace);
    const log = options.log ?? console;
    let work: LeasedWork | null = null;
    let projectorWork: ReturnType<typeof projectorTask> | null = null;
    let jobsWork: ReturnType<typeof jobsTask> | null = null;
    const replayThread = role !== "api" && config.replayThread ? new ReplayThread(config, metrics) : null;
    if (role !== "api") {
      engine = new StateEngine(
        { js: topology.js, jsm: topology.jsm, names: topology.names, store: stateStore, patients, log, ...(published ? { published } : {}) },
        { idleMs: config.actorIdleMs, viewDebounceMs: config.viewDebounceMs, renderWaitMs: config.renderWaitMs, maxActive: config.maxActivePatients, maxInflightBytes: config.stateInflightBytes },
      );
      const theEngine = engine;
      instance.setPartitions(() => theEngine.partitions());
      engine.serveTouch(nc, touchSubject);
      if (clickhouse.client) await migrate(clickhouse.client, config.namespace);
      deviceFeed = new DeviceFeed({ nc, js: topology.js, jsm: topology.jsm, names: topology.names, projects, orgs, writer: logWriter, publisher, log }, `${config.namespace}_device_feed`);
      await deviceFeed.start();
      const tasks = new Map<string, LeasedTask>();
      for (let p = 0; p < topology.names.partitions; p++) tasks.set(partitionResource(p), { start: (epoch) => theEngine.addPartition(p, epoch), stop: () => theEngine.removePartition(p) });
      const { client, insertRows, embedded } = clickhouse;
      if (client && insertRows) {
        projectorWork = projectorTask({ config, nc, topology, redis, client, insertRows, embedded, ...(published ? { published } : {}), log });
        tasks.set("projector", projectorWork.task);
      }
      jobsWork = jobsTask({
        config,
        nc,
        controlSubject,
        runner: {
          store: jobStore,
          patients,
          logWriter,
          stateStore,
          uploads,
          staging: { js: topology.js, jsm: topology.jsm, publisher, names: topology.names },
          log,
          replayWrites: replayThread ?? undefined,
          ...options.ingestion,
        },
      });
      tasks.set("jobs", jobsWork.task);
      work = await LeasedWork.join({ nc, namespace: config.namespace, ttlMs: config.leaseTtlMs, instance, tasks, log: { info: options.log?.info?.bind(options.log) ?? (() => {}), warn: log.warn.bind(log), error: log.error.bind(log) } });
    }
    const ingestion = new IngestionService({ store: jobStore, uploads, runner: () => jobsWork?.current() ?? null, nc, controlSubject: async () => {
      const epoch = await jobsEpoch("jobs");
      return epoch === null ? null : controlSubject(epoch);
    }, maxUploadBytes: config.maxUploadBytes, admitUpload: uploadIssuerCheck({ apiKeys, projects }) });
    // An embedded copy is current only in the member that projects into it: the others ask that one.
    const localClient = clickhouse.client;
    const logQuery = new LogQueryService({
      client: () => (clickhouse.embedded && !projectorWork?.current() ? null : localClient),
      nc,
      namespace: config.namespace,
      redis,
      projectAccepted: (p) => stateStore.projectAccepted(p),
      projector: () => projectorWork?.current() ?? null,
      options: { timeoutMs: config.queryTimeoutMs, maxRowsToRead: config.queryMaxRowsToRead, maxWaitMs: config.readWaitMs },
    });
    // Their own counts, read at each scrape.
    if (engine) metrics.observeEngine(engine.stats);
    if (projectorWork) metrics.observeProjector(projectorWork.counts);
    if (deviceFeed) metrics.observeDeviceFeed(deviceFeed.stats);
    let backgroundStopped: Promise<void> | undefined;
    const stopBackground = () =>
      (backgroundStopped ??= (async () => {
        await work?.stop();
        await replayThread?.close();
        await deviceFeed?.stop();
        await engine?.stop();
      })());
    return {
      instance, metrics, config, nc, topology, publisher, redis, clickhouse, orgs, projects, apiKeys, patients, tokens, audit, ledger, logIds, logWriter,
      stateStore, stateReader, horizonReader: new HorizonReader({ reader: stateReader, log: topology }), engine, deviceFeed, published: published ?? null, logQuery, ingestion,
      get projector() {
        return projectorWork?.current() ?? null;
      },
      get jobRunner() {
        return jobsWork?.current() ?? null;
      },
      stopBackground,
      async close() {
        await stopBackground();
        for (const s of stops) s();
        publisher.close();
        await clickhouse.client?.close().catch(() => undefined);
        await redis.quit().catch(() => undefined);
        await nc.drain().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const s of stops) s();
    await nc.close();
    throw err;
  }
}
