import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, jetstream, RetentionPolicy, StorageType, DiscardPolicy, type JetStreamManager, type JetStreamClient } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { Objm, type ObjectStore } from "@nats-io/obj";
import { resolveLogLayout, type LayoutDeps } from "./log-layout.js";
import { DEFAULT_PARTITIONS, partitionOf } from "./partitions.js";

/** Largest audit entry the audit stream stores (its max_msg_size); src/audit keeps every entry under it. */
export const AUDIT_MAX_MSG_BYTES = 1024 * 1024;

/**
 * Names of every stream, bucket and subject, derived from one namespace so that test
 * runs (and several deployments) can share a NATS server without meeting. `partitions` is
 * the namespace's recorded count (see infra/nats/log-layout.ts).
 */
export function topologyNames(ns: string, partitions = DEFAULT_PARTITIONS) {
  const upper = ns.toUpperCase();
  return {
    namespace: ns,
    logsStream: `${upper}_LOGS`,
    partitions,
    /**
     * Prefix of the state engine's durable consumers of one partition of the log stream:
     * each lease tenure's durable adds its epoch (actors/partition-readers.ts).
     */
    stateConsumers: (partition: number) => `${ns}_state_p${partition}_`,
    /**
     * `{ns}.log.{partition}.{organization}.{project}.{patient}`: a patient's history is one
     * subject filter away, and a partition's logs one filter too.
     */
    logSubject: (org: string, project: string, patient: string) => `${ns}.log.${partitionOf(patient, partitions)}.${org}.${project}.${patient}`,
    logSubjectsOfProject: (org: string, project: string) => `${ns}.log.*.${org}.${project}.*`,
    logSubjectsOfPartition: (partition: number) => `${ns}.log.${partition}.>`,
    logSubjectsAll: `${ns}.log.>`,
    /** Every subject of the partitioned layout (one token more than the first layout's). */
    partitionedLogSubjects: `${ns}.log.*.*.*.*`,
    /** The first layout's subjects, `{ns}.log.{organization}.{project}.{patient}`: only a migration reads them. */
    legacyLogSubjects: `${ns}.log.*.*.*`,
    legacyStateConsumer: `${ns}_state`,
    ingestStream: `${upper}_INGEST`,
    /** `{ns}.ingest.{organization}.{project}`: device gateways publish log envelopes here. */
    ingestSubject: (org: string, project: string) => `${ns}.ingest.${org}.${project}`,
    /** `{ns}.ingest` with fewer or more than two tokens after it: no stream keeps them, the device feed answers them. */
    ingestSubjectsMisshapen: [`${ns}.ingest`, `${ns}.ingest.*`, `${ns}.ingest.*.*.>`],
    deadLetterStream: `${upper}_DEAD_LETTERS`,
    deadLetterSubject: (org: string, project: string) => `${ns}.dlq.${org}.${project}`,
    idempotencyStream: `${upper}_IDEMPOTENCY`,
    /** `{ns}.idem.{project}.{shard}`: the idempotency ledger, one compare-and-set subject per shard. */
    idempotencySubject: (project: string, shard: number) => `${ns}.idem.${project}.${shard}`,
    idempotencySubjectsAll: `${ns}.idem.>`,
    logIdStream: `${upper}_LOG_IDS`,
    /**
     * `{ns}.logid.{project}.{day}.{shard}`: the clients' own log ids (the SDK's `log_id`),
     * claimed for a day or two so that a client's re-send of a batch is a duplicate.
     */
    logIdSubject: (space: string, shard: number) => `${ns}.logid.${space}.${shard}`,
    logIdSubjectsAll: `${ns}.logid.>`,
    auditStream: `${upper}_AUDIT`,
    /** `{ns}.audit.{organization}`: who read or wrote what, one append-only record per request. */
    auditSubject: (org: string) => `${ns}.audit.${org}`,
    stagingStream: `${upper}_STAGING`,
    /** `{ns}.staging.{job}.p.{patient}`: an ingestion job's validated logs, held until replay. */
    stagingSubject: (job: string, patient: string) => `${ns}.staging.${job}.p.${patient}`,
    stagingLogSubjectsOfJob: (job: string) => `${ns}.staging.${job}.p.*`,
    /** `{ns}.staging.{job}.m.{name}`: a job's working documents (its patients, its replay list). */
    stagingDocSubject: (job: string, name: string) => `${ns}.staging.${job}.m.${name}`,
    stagingSubjectsOfJob: (job: string) => `${ns}.staging.${job}.>`,
    /**
     * Where one project's data lies in JetStream, stream by stream: deleting the project
     * purges each filter (src/control/project-erase.ts). A stream that keeps data per
     * project lists its filter here. Staging is per job (the job's erase purges it); the
     * audit stream is kept, and cannot be purged.
     */
    projectSubjects: (org: string, project: string): { stream: string; filter: string }[] => [
      { stream: `${upper}_LOGS`, filter: `${ns}.log.*.${org}.${project}.*` },
      { stream: `${upper}_IDEMPOTENCY`, filter: `${ns}.idem.${project}.*` },
      { stream: `${upper}_LOG_IDS`, filter: `${ns}.logid.${project}.>` },
      { stream: `${upper}_INGEST`, filter: `${ns}.ingest.${org}.${project}` },
      { stream: `${upper}_DEAD_LETTERS`, filter: `${ns}.dlq.${org}.${project}` },
    ],
    /** Object store of uploaded JSONL files (and inline records) of ingestion jobs. */
    uploadsBucket: `${ns}_uploads`,
    /**
     * Members and the leases on partitions and singletons (infra/nats/lease-bucket.ts):
     * not in `buckets`, as its TTL is the lease TTL, a setting of the members.
     */
    leasesBucket: `${ns}_leases`,
    buckets: {
      config: `${ns}_config`,
      orgs: `${ns}_orgs`,
      projects: `${ns}_projects`,
      slugs: `${ns}_slugs`,
      apiKeys: `${ns}_api_keys`,
      apiKeyHashes: `${ns}_api_key_hashes`,
      patients: `${ns}_patients`,
      externalIds: `${ns}_external_ids`,
      ingestionJobs: `${ns}_ingestion_jobs`,
      ingestionKeys: `${ns}_ingestion_keys`,
      uploadTokens: `${ns}_upload_tokens`,
    },
  } as const;
}

export type TopologyNames = ReturnType<typeof topologyNames>;
export type BucketName = keyof TopologyNames["buckets"];

export interface Topology {
  names: TopologyNames;
  jsm: JetStreamManager;
  js: JetStreamClient;
  kv: Record<BucketName, KV>;
  /** Uploaded ingestion files (JetStream object store). */
  uploads: ObjectStore;
}

/** How long a claimed client log id is kept (stream and Redis index): the two days it is looked up in, and a margin. */
export const LOG_ID_RETENTION_SECONDS = 3 * 24 * 3600;

/**
 * Creates (or finds) every stream and bucket. Idempotent, so every start runs it; an
 * existing stream keeps its data and gets its config brought up to date.
 */
export async function ensureTopology(nc: NatsConnection, ns: string, options: { partitions?: number | null } & Pick<LayoutDeps, "log" | "migration"> = {}): Promise<Topology> {
  const streamNames = topologyNames(ns);
  const jsm = await jetstreamManager(nc);
  await ensureStream(jsm, {
    name: streamNames.idempotencyStream,
    subjects: [streamNames.idempotencySubjectsAll],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: 0,
    max_msgs: -1,
    max_bytes: -1,
    max_msg_size: 4 * 1024 * 1024,
    // Catching up on a shard reads "next message on this subject" directly.
    allow_direct: true,
  });
  await ensureStream(jsm, {
    name: streamNames.logIdStream,
    subjects: [streamNames.logIdSubjectsAll],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    // A client's log id is claimed in the bucket of its acceptance day and looked up in
    // that day's and the day before's: older claims are never read again.
    max_age: LOG_ID_RETENTION_SECONDS * 1_000_000_000,
    max_msgs: -1,
    max_bytes: -1,
    max_msg_size: 4 * 1024 * 1024,
    allow_direct: true,
  });
  await ensureStream(jsm, {
    name: streamNames.ingestStream,
    subjects: [`${ns}.ingest.*.*`],
    storage: StorageType.File,
    // A buffer in front of the write path, not a record: a message goes once handled.
    retention: RetentionPolicy.Workqueue,
    discard: DiscardPolicy.Old,
    max_age: 7 * 24 * 3600 * 1_000_000_000,
    max_msg_size: 4 * 1024 * 1024,
    duplicate_window: 120_000_000_000,
  });
  await ensureStream(jsm, {
    name: streamNames.deadLetterStream,
    subjects: [`${ns}.dlq.*.*`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: 30 * 24 * 3600 * 1_000_000_000,
    max_msg_size: 8 * 1024 * 1024,
  });
  const logsConfig = {
    name: streamNames.logsStream,
    subjects: [streamNames.logSubjectsAll],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    // Logs are the system of record: nothing expires, nothing is capped.
    max_age: 0,
    max_msgs: -1,
    max_bytes: -1,
    max_msg_size: 16 * 1024 * 1024,
    // JetStream's default (2 min in ns). Log publishes carry no Nats-Msg-Id: a client's
    // re-send is caught by the idempotency and log_id ledgers, which last a day or more.
    duplicate_window: 120_000_000_000,
    // A new patient actor asks "first message on this subject?" directly.
    allow_direct: true,
  };
  await ensureStream(jsm, logsConfig);
  await ensureStream(jsm, {
    name: streamNames.auditStream,
    subjects: [`${ns}.audit.*`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    // An audit trail is append-only: nothing expires, and no message can be deleted or
    // purged through the API (erasing a patient erases its logs, not who read them).
    max_age: 0,
    max_msgs: -1,
    max_bytes: -1,
    max_msg_size: AUDIT_MAX_MSG_BYTES,
    deny_delete: true,
    deny_purge: true,
  });
  await ensureStream(jsm, {
    name: streamNames.stagingStream,
    subjects: [`${ns}.staging.>`],
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    // Held until the job replays or is cancelled (possibly days of waiting for a
    // confirmation); each job purges its own subjects when it ends.
    max_age: 0,
    max_msgs: -1,
    max_bytes: -1,
    max_msg_size: 8 * 1024 * 1024,
  });
  const kvm = new Kvm(nc);
  const kv = {} as Record<BucketName, KV>;
  for (const [key, bucket] of Object.entries(streamNames.buckets) as [BucketName, string][]) {
    kv[key] = await kvm.create(bucket, { history: 1, storage: StorageType.File });
  }
  // Uploads expire after 7 days: a file is read only until its job has staged its logs.
  const uploads = await new Objm(nc).create(streamNames.uploadsBucket, { storage: StorageType.File, ttl: 7 * 24 * 3600 * 1_000_000_000 });
  const js = jetstream(nc);
  const { partitions } = await resolveLogLayout({ js, jsm, config: kv.config, names: streamNames, log: options.log, migration: options.migration }, options.partitions ?? null);
  return { names: topologyNames(ns, partitions), jsm, js, kv, uploads };
}

async function ensureStream(jsm: JetStreamManager, config: Parameters<JetStreamManager["streams"]["add"]>[0] & { name: string }): Promise<void> {
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (err) {
    if (!String((err as Error).message).includes("stream not found")) throw err;
    await jsm.streams.add(config);
  }
}

/** Removes everything ensureTopology made: for tests and `PSS_NAMESPACE` clean-up only. */
export async function destroyTopology(nc: NatsConnection, ns: string): Promise<void> {
  const names = topologyNames(ns);
  const jsm = await jetstreamManager(nc);
  const streams = [names.logsStream, names.idempotencyStream, names.logIdStream, names.ingestStream, names.deadLetterStream, names.auditStream, names.stagingStream, `OBJ_${names.uploadsBucket}`, `KV_${names.leasesBucket}`, ...Object.values(names.buckets).map((b) => `KV_${b}`)];
  for (const s of streams) {
    try {
      await jsm.streams.delete(s);
    } catch {
      // already gone
    }
  }
}
