import { availableParallelism } from "node:os";

/**
 * What a process of the service does (PSS_ROLE): "api" serves HTTP and MCP only, "worker"
 * runs the background work only (state engine, ClickHouse projector and embedded
 * ClickHouse, device feed, ingestion jobs), "all" both, as separate processes.
 */
export type Role = "all" | "api" | "worker";
export const ROLES: readonly Role[] = ["all", "api", "worker"];

/**
 * Configuration from the environment, validated once at start. Names and defaults
 * follow the contract's "Start and configuration"; the PSS_* tuning knobs are this
 * service's own and documented in docs/configuration.md.
 */
export interface Config {
  /** @default 8080 */
  port: number;
  /** @default "127.0.0.1" */
  host: string;
  /**
   * PSS_METRICS_PORT: where /metrics (and /healthz) are served instead of on `port`, on
   * `host`; the only HTTP of a PSS_ROLE=worker process. Unset (null): /metrics is on `port`
   * and a worker run alone serves none.
   */
  metricsPort: number | null;
  /**
   * PSS_PUBLIC_URL: the service's address as clients reach it (`https://pss.example.org`),
   * named in 401 answers and the protected-resource metadata (RFC 9728). Unset: the
   * request's own scheme and Host header.
   */
  publicUrl: string | null;
  /** May carry `user:password@` (or `token@`) for a NATS server with users. @default "nats://127.0.0.1:4222" */
  natsUrl: string;
  /**
   * File holding the nkey seed the service authenticates to NATS with (NATS_NKEY_SEED_FILE);
   * with PSS_SECURE_NATS=1 and none given, the one infra/scripts/secure-nats.ts made,
   * `{dataDir}/nats/service.nk`. Unset: no nkey.
   */
  natsNkeySeedFile: string | undefined;
  /** @default "redis://127.0.0.1:6379" */
  redisUrl: string;
  /** Unset: embedded ClickHouse (chdb) with data under dataDir. */
  clickhouseUrl: string | undefined;
  /** @default "./data" */
  dataDir: string;
  /** Bootstrap org-wide key holding every scope; unset: no bootstrap. */
  adminKey: string | undefined;
  /** Secret for HS256 JWTs; unset: one is generated once and kept in the config KV bucket. */
  jwtSecret: string | undefined;
  /** Lifetime of /auth/token JWTs in seconds. @default 900 (15 min) */
  jwtTtlSeconds: number;
  /** Prefix of every stream, KV bucket, subject root and Redis key; lets runs share servers. @default "pss" */
  namespace: string;
  /** Largest request body in bytes; larger bodies get 413. @default 10_485_760 (10 MiB) */
  maxBodyBytes: number;
  /** Most logs in one POST /v1/logs/batch; more is 422. @default 5_000 */
  maxBatchLogs: number;
  /**
   * Largest POST /v1/logs/batch body in bytes (at least maxBodyBytes): the hosted product's
   * SDK flushes up to 50 logs of up to 512 KiB each in one request. @default 33_554_432 (32 MiB)
   */
  maxBatchBodyBytes: number;
  /** How long a JetStream publish may wait for its ack, in ms. @default 5_000 */
  publishTimeoutMs: number;
  /** Pino level. @default "info" */
  logLevel: string;
  /** What this `npm start` runs (PSS_ROLE): see Role. @default "all" */
  role: Role;
  /** HTTP (api) processes sharing the port (node:cluster); "auto" = one per core. @default 1 */
  workers: number;
  /**
   * Niceness the background worker of PSS_ROLE=all adds to its own (PSS_WORKER_NICENESS),
   * so the HTTP processes win the CPU when both want it; a dedicated PSS_ROLE=worker keeps
   * its priority. 0 to 19. @default 10
   */
  workerNiceness: number;
  /**
   * The Linux scheduling policy of that worker (PSS_WORKER_SCHEDULER): "idle" (SCHED_IDLE:
   * it runs on CPU time nothing else wants, and yields at once when an api process wakes) or
   * "normal" (niceness alone). @default "idle"
   */
  workerScheduler: "idle" | "normal";
  /** Longest a state read waits for the patient's accepted logs to be applied. @default 2_000 ms */
  readWaitMs: number;
  /** Longest one Redis command may take, its time queued while Redis reconnects included. */
  redisCommandTimeoutMs: number;
  /** Longest a log query may run in ClickHouse. @default 10_000 ms */
  queryTimeoutMs: number;
  /** Most rows one log query may read before it is refused as too costly. @default 200_000_000 */
  queryMaxRowsToRead: number;
  /** A patient actor idle this long is passivated. @default 60_000 ms */
  actorIdleMs: number;
  /** Views are regenerated once a patient's logs pause this long (reads render a stale view themselves). @default 1_000 ms */
  viewDebounceMs: number;
  /**
   * Longest a patient waits in memory to render its views while the engine stays busy;
   * past it, it is passivated and the engine renders its views from Redis once it catches
   * up. @default 5_000 ms
   */
  renderWaitMs: number;
  /** Patients held in memory by the state engine (about 80 KB of RSS each in bench:state); past it the least recently fed are passivated. @default 100 */
  maxActivePatients: number;
  /**
   * Bytes of delivered log messages the state engine holds before it has applied and
   * acknowledged them (as read from the stream; parsed they take several times that);
   * it reads on once under it. Bounds the engine's memory while it works through a
   * backlog. @default 16 MiB
   */
  stateInflightBytes: number;
  /**
   * Requests one API key (with the JWTs and patient tokens minted from it; or one IP
   * address without a credential) may make per rate-limit window; 0 turns limiting off.
   * @default 10_000
   */
  rateLimitMax: number;
  /** The rate-limit window in ms. @default 60_000 (1 min) */
  rateLimitWindowMs: number;
  /** An ingestion job left in AWAITING_CONFIRMATION this long is cancelled. @default 604_800_000 (7 days) */
  jobConfirmTimeoutMs: number;
  /** Largest file one upload URL takes, in bytes. @default 5_368_709_120 (5 GiB) */
  maxUploadBytes: number;
  /** Ingestion jobs running at once per worker process; more wait in QUEUED. @default 2 */
  maxRunningJobs: number;
  /**
   * REPLAYING writes on a worker thread of its own (actors/ingestion/replay-thread.ts):
   * jobs replay faster on a second core, at the cost of that thread's heap and
   * connections (measured in docs/performance-history.md). @default false
   */
  replayThread: boolean;
  /**
   * While an ingestion job works, V8's old generation may grow to at most 1 + this/100
   * times what is live between full collections (infra/heap-growth-cap.ts); 0 leaves V8's
   * own factor (up to 4). @default 80
   */
  jobHeapGrowthPercent: number;
  /**
   * PSS_PARTITIONS: how many partitions patients hash to, each with its own durable
   * consumer and lease. Fixed when the namespace is created and recorded there; null
   * (unset) takes the recorded number, or 16 for a new namespace. A value other than the
   * recorded one is refused at start.
   */
  partitions: number | null;
  /** PSS_LEASE_TTL_MS: how long a member's leases outlive its last heartbeat. @default 6_000 */
  leaseTtlMs: number;
}

export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(readonly variable: string, message: string, options?: { cause?: unknown }) {
    super(`${variable}: ${message}`, options);
  }
}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string;
function url(env: Env, name: string, fallback: undefined, protocols: string[]): string | undefined;
function url(env: Env, name: string, fallback: string | undefined, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch (err) {
    throw new ConfigError(name, `is not a valid URL: "${raw}"`, { cause: err });
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(" or ")}, got "${parsed.protocol}"`);
  }
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const namespace = env.PSS_NAMESPACE || "pss";
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(namespace)) {
    throw new ConfigError("PSS_NAMESPACE", "must be lowercase letters, digits or _ (start with a letter, at most 31)");
  }
  const adminKey = env.PSS_ADMIN_KEY || undefined;
  if (adminKey !== undefined && adminKey.length < 16) {
    throw new ConfigError("PSS_ADMIN_KEY", "must be at least 16 characters");
  }
  const jwtSecret = env.PSS_JWT_SECRET || undefined;
  if (jwtSecret !== undefined && jwtSecret.length < 32) {
    throw new ConfigError("PSS_JWT_SECRET", "must be at least 32 characters");
  }
  const secureNats = int(env, "PSS_SECURE_NATS", 0, 0, 1) === 1;
  const natsNkeySeedFile = env.NATS_NKEY_SEED_FILE || (secureNats ? `${env.DATA_DIR || "./data"}/nats/service.nk` : undefined);
  const logLevel = env.LOG_LEVEL || "info";
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(logLevel)) {
    throw new ConfigError("LOG_LEVEL", `must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  const workerScheduler = env.PSS_WORKER_SCHEDULER || "idle";
  if (workerScheduler !== "idle" && workerScheduler !== "normal") {
    throw new ConfigError("PSS_WORKER_SCHEDULER", `must be "idle" or "normal", got "${workerScheduler}"`);
  }
  const role = (env.PSS_ROLE || "all") as Role;
  if (!ROLES.includes(role)) {
    throw new ConfigError("PSS_ROLE", `must be one of ${ROLES.join(", ")}, got "${env.PSS_ROLE}"`);
  }
  return {
    port: int(env, "PORT", 8080, 0, 65535),
    host: env.HOST || "127.0.0.1",
    metricsPort: env.PSS_METRICS_PORT ? int(env, "PSS_METRICS_PORT", 0, 1, 65535) : null,
    publicUrl: url(env, "PSS_PUBLIC_URL", undefined, ["http:", "https:"])?.replace(/\/+$/, "") ?? null,
    natsUrl: url(env, "NATS_URL", "nats://127.0.0.1:4222", ["nats:", "tls:"]),
    natsNkeySeedFile,
    redisUrl: url(env, "REDIS_URL", "redis://127.0.0.1:6379", ["redis:", "rediss:"]),
    clickhouseUrl: url(env, "CLICKHOUSE_URL", undefined, ["http:", "https:"]),
    dataDir: env.DATA_DIR || "./data",
    adminKey,
    jwtSecret,
    jwtTtlSeconds: int(env, "PSS_JWT_TTL_SECONDS", 900, 30, 86_400),
    namespace,
    maxBodyBytes: int(env, "PSS_MAX_BODY_BYTES", 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxBatchLogs: int(env, "PSS_MAX_BATCH_LOGS", 5_000, 1, 100_000),
    maxBatchBodyBytes: int(env, "PSS_MAX_BATCH_BODY_BYTES", 32 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    publishTimeoutMs: int(env, "PSS_PUBLISH_TIMEOUT_MS", 5_000, 100, 120_000),
    logLevel,
    readWaitMs: int(env, "PSS_READ_WAIT_MS", 2_000, 0, 60_000),
    redisCommandTimeoutMs: int(env, "PSS_REDIS_COMMAND_TIMEOUT_MS", 5_000, 100, 600_000),
    queryTimeoutMs: int(env, "PSS_QUERY_TIMEOUT_MS", 10_000, 100, 600_000),
    queryMaxRowsToRead: int(env, "PSS_QUERY_MAX_ROWS_TO_READ", 200_000_000, 1_000, 100_000_000_000),
    actorIdleMs: int(env, "PSS_ACTOR_IDLE_MS", 60_000, 10, 3_600_000),
    viewDebounceMs: int(env, "PSS_VIEW_DEBOUNCE_MS", 1_000, 0, 60_000),
    renderWaitMs: int(env, "PSS_RENDER_WAIT_MS", 5_000, 10, 3_600_000),
    maxActivePatients: int(env, "PSS_MAX_ACTIVE_PATIENTS", 100, 1, 10_000_000),
    stateInflightBytes: int(env, "PSS_STATE_INFLIGHT_MB", 16, 1, 4_096) * 1024 * 1024,
    replayThread: int(env, "PSS_REPLAY_THREAD", 0, 0, 1) === 1,
    rateLimitMax: int(env, "PSS_RATE_LIMIT_MAX", 10_000, 0, 100_000_000),
    rateLimitWindowMs: int(env, "PSS_RATE_LIMIT_WINDOW_MS", 60_000, 1_000, 86_400_000),
    jobConfirmTimeoutMs: int(env, "PSS_JOB_CONFIRM_TIMEOUT_MS", 7 * 24 * 3600 * 1000, 100, 365 * 24 * 3600 * 1000),
    maxUploadBytes: int(env, "PSS_MAX_UPLOAD_BYTES", 5 * 1024 ** 3, 1024, 1024 ** 4),
    maxRunningJobs: int(env, "PSS_MAX_RUNNING_JOBS", 2, 1, 64),
    jobHeapGrowthPercent: int(env, "PSS_JOB_HEAP_GROWTH_PERCENT", 80, 0, 1_000),
    partitions: env.PSS_PARTITIONS ? int(env, "PSS_PARTITIONS", 16, 1, 1_024) : null,
    leaseTtlMs: int(env, "PSS_LEASE_TTL_MS", 6_000, 1_000, 300_000),
    role,
    workerNiceness: int(env, "PSS_WORKER_NICENESS", 10, 0, 19),
    workerScheduler,
    workers: env.PSS_WORKERS === "auto" ? availableParallelism() : int(env, "PSS_WORKERS", 1, 1, 64),
  };
}
