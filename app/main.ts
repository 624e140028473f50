import cluster from "node:cluster";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { ConfigError, loadConfig, type Config } from "../src/config.js";
import { createServices, type ProcessRole } from "./services.js";
import { pino } from "pino";
import { buildApp, loggerOptions } from "./http/app.js";

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
}

/** Longest a stop (SIGTERM, SIGINT) waits for requests and backends to close, as a cluster's primary waits for its workers. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * The process's logger: the HTTP app's and its background work's (state engine, projector,
 * device feed, ingestion jobs), so every line is JSON at LOG_LEVEL with the same redaction.
 */
const processLogger = (config: Config) => pino(loggerOptions({}, config.logLevel) as Parameters<typeof pino>[0] & object);

/** One HTTP server with its own connections to the backends. */
async function serve(config: Config, role: ProcessRole): Promise<void> {
  const log = processLogger(config);
  const services = await createServices(config, role, { log });
  const app = await buildApp(services, { loggerInstance: log });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, "shutting down");
    // A backend that stopped answering (Redis gone, NATS reconnecting) must not hold the
    // process: what was not acknowledged is delivered again after the restart.
    setTimeout(() => {
      app.log.warn({ signal, after_ms: SHUTDOWN_GRACE_MS }, "shutdown did not finish in time; exiting");
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    await app.close();
    await services.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  await app.listen({ port: config.port, host: config.host });
}

/**
 * Without PSS_ADMIN_KEY, a first start makes one and keeps it in DATA_DIR/admin-key
 * (mode 0600), so `npm start` alone gives a newcomer a working key. The key itself
 * is never logged; only where to find it.
 */
function ensureLocalAdminKey(config: Config): Config {
  if (config.adminKey) return config;
  const file = resolve(config.dataDir, "admin-key");
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `pss_admin_${randomBytes(24).toString("base64url")}\n`, { mode: 0o600 });
    console.error(`created a bootstrap admin key in ${file} (set PSS_ADMIN_KEY to choose your own)`);
  }
  return { ...config, adminKey: readFileSync(file, "utf8").trim() };
}

/**
 * With PSS_WORKERS > 1 the primary only supervises: each worker is a full server, and
 * they share the port. Node runs JavaScript on one thread, so this is how one machine's
 * cores serve HTTP; all shared state lives in NATS and Redis, never in a worker.
 */
async function main(): Promise<void> {
  const config = ensureLocalAdminKey(configOrExit());
  if (config.workers <= 1) return serve(config, "all");
  if (cluster.isWorker) return serve(config, "api");
  // The primary owns what must have one owner (embedded ClickHouse, background work)
  // before the workers start asking it.
  const background = await createServices(config, "worker", { log: processLogger(config) });
  for (let i = 0; i < config.workers; i++) cluster.fork();
  let stopping = false;
  cluster.on("exit", (worker, code) => {
    if (stopping) return;
    console.error(`worker ${worker.process.pid} exited with ${code}; starting another`);
    cluster.fork();
  });
  const stop = () => {
    stopping = true;
    void background.close();
    for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
    setTimeout(() => process.exit(0), SHUTDOWN_GRACE_MS).unref();
    cluster.on("exit", () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((err) => {
  console.error("failed to start:", err instanceof Error ? err.message : err);
  process.exit(1);
});
