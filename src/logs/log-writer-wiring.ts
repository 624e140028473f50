import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../infra/nats/connection.js";
import { ensureTopology, type Topology } from "../../infra/nats/topology.js";
import { createJetStreamPublisher, type JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import { JsonKv } from "../../infra/nats/json-kv.js";
import { entryValue, watchKeys } from "../../infra/nats/kv-invalidation.js";
import { connectRedis } from "../../infra/redis.js";
import { PatientStateStore } from "../../actors/state-store.js";
import type { Config } from "../config.js";
import { PatientStore, type Patient } from "../control/patients.js";
import { IdempotencyLedger } from "./idempotency-ledger.js";
import { LogWriter } from "./log-writer.js";

/** The parts a LogWriter is built from, whichever thread builds it. */
export interface LogWriterParts {
  nc: NatsConnection;
  topology: Topology;
  publisher: JetStreamPublisher;
  patients: PatientStore;
  ledger: IdempotencyLedger;
  stateStore: PatientStateStore;
  config: Pick<Config, "publishTimeoutMs">;
}

export function newLogWriter(p: LogWriterParts): LogWriter {
  const { topology, nc } = p;
  return new LogWriter({
    accepted: p.stateStore,
    publisher: p.publisher,
    names: topology.names,
    js: topology.js,
    jsm: topology.jsm,
    patients: p.patients,
    ledger: p.ledger,
    // Stay well under the server's max_payload: headers and the subject travel too.
    maxMessageBytes: Math.max(64 * 1024, (nc.info?.max_payload ?? 1024 * 1024) - 16 * 1024),
    claimLeaseMs: p.config.publishTimeoutMs * 2 + 1_000,
  });
}

/**
 * A LogWriter on connections of its own, for a thread that writes apart from the HTTP
 * app (the ingestion replay's worker): the same stores, ledger and stream, so it
 * deduplicates and stores exactly as POST /v1/logs/batch does.
 */
export async function openLogWriter(config: Config): Promise<{ writer: LogWriter; close(): Promise<void> }> {
  const nc = await connectNats(config.natsUrl, "patient-state-service-replay");
  const stops: (() => void)[] = [];
  try {
    const topology = await ensureTopology(nc, config.namespace);
    const publisher = createJetStreamPublisher(nc, { timeoutMs: config.publishTimeoutMs });
    const redis = await connectRedis(config.redisUrl);
    const patients = new PatientStore(new JsonKv(topology.kv.patients), new JsonKv(topology.kv.externalIds));
    stops.push(await watchKeys(topology.kv.patients, (e) => patients.refresh(e.key, entryValue<Patient>(e))));
    const ledger = new IdempotencyLedger({ publisher, js: topology.js, jsm: topology.jsm, redis, names: topology.names, redisPrefix: config.namespace });
    const stateStore = new PatientStateStore(redis, config.namespace);
    const writer = newLogWriter({ nc, topology, publisher, patients, ledger, stateStore, config });
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
