import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../infra/nats/connection.js";
import { ensureTopology, LOG_ID_RETENTION_SECONDS, type Topology } from "../../infra/nats/topology.js";
import { createJetStreamPublisher, type JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import { JsonKv } from "../../infra/nats/json-kv.js";
import { entryValue, watchKeys } from "../../infra/nats/kv-invalidation.js";
import { connectRedis, type Redis } from "../../infra/redis/connection.js";
import { PatientStateStore } from "../../infra/redis/state-store.js";
import type { Config } from "../config.js";
import { PatientStore, type Patient } from "../control/patients.js";
import { IdempotencyLedger } from "./idempotency-ledger.js";
import { LogWriter, type PatientLogMessage } from "./log-writer.js";
import type { PublishedMessages } from "../../infra/nats/published-messages.js";
import type { LogOutcomes } from "../../infra/metrics/process-metrics.js";

/** The write path of POST /v1/logs/batch, with the stores it writes through. */
export interface WritePath {
  patients: PatientStore;
  ledger: IdempotencyLedger;
  logIds: IdempotencyLedger;
  stateStore: PatientStateStore;
  writer: LogWriter;
}

/**
 * Builds the write path on given connections: the patient store (kept current by a KV
 * watch, whose stop goes onto `stops`), the idempotency ledger, the state store (for
 * read-your-writes) and the LogWriter over them. The service and the replay thread both
 * build theirs here, so a thread that writes apart claims keys on the same ledger shards
 * and stores exactly as the service does.
 */
export async function openWritePath(
  c: {
    nc: NatsConnection;
    topology: Topology;
    publisher: JetStreamPublisher;
    redis: Redis;
    config: Pick<Config, "namespace" | "publishTimeoutMs">;
    /** Where stored log messages go for this process's own readers of the stream (its state engine and projector). */
    published?: PublishedMessages<PatientLogMessage>;
    /** Where the writer counts what became of each log (the process's metrics). */
    outcomes?: LogOutcomes;
  },
  stops: (() => void)[],
): Promise<WritePath> {
  const { nc, topology, publisher, redis, config, published, outcomes } = c;
  const patients = new PatientStore(new JsonKv(topology.kv.patients), new JsonKv(topology.kv.externalIds));
  stops.push(await watchKeys(topology.kv.patients, (e) => patients.refresh(e.key, entryValue<Patient>(e))));
  const { names } = topology;
  const ledgerDeps = { publisher, js: topology.js, jsm: topology.jsm, redis, names, redisPrefix: config.namespace };
  const ledger = new IdempotencyLedger(ledgerDeps);
  const logIds = new IdempotencyLedger({
    ...ledgerDeps,
    store: { stream: names.logIdStream, subject: names.logIdSubject, indexKind: "logid", ttlSeconds: LOG_ID_RETENTION_SECONDS },
  });
  const stateStore = new PatientStateStore(redis, config.namespace);
  const writer = new LogWriter({
    accepted: stateStore,
    publisher,
    names: topology.names,
    js: topology.js,
    jsm: topology.jsm,
    patients,
    ledger,
    logIds,
    // Stay well under the server's max_payload: headers and the subject travel too.
    maxMessageBytes: Math.max(64 * 1024, (nc.info?.max_payload ?? 1024 * 1024) - 16 * 1024),
    claimLeaseMs: config.publishTimeoutMs * 2 + 1_000,
    ...(published ? { published } : {}),
    ...(outcomes ? { outcomes } : {}),
  });
  return { patients, ledger, logIds, stateStore, writer };
}

/**
 * A LogWriter on connections of its own, for a thread that writes apart from the HTTP
 * app (the ingestion replay's worker): the same stores, ledger and stream, so it
 * deduplicates and stores exactly as POST /v1/logs/batch does.
 */
export async function openLogWriter(config: Config): Promise<{ writer: LogWriter; close(): Promise<void> }> {
  const nc = await connectNats(config, "patient-state-service-replay");
  const stops: (() => void)[] = [];
  try {
    const topology = await ensureTopology(nc, config.namespace);
    const publisher = createJetStreamPublisher(nc, { timeoutMs: config.publishTimeoutMs });
    const redis = await connectRedis(config.redisUrl, config.redisCommandTimeoutMs);
    const { writer } = await openWritePath({ nc, topology, publisher, redis, config }, stops);
    return {
      writer,
      async close() {
        for (const s of stops) s();
        publisher.close();
        await redis.quit().catch(() => undefined);
        await nc.drain().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const s of stops) s();
    await nc.close().catch(() => undefined);
    throw err;
  }
}
