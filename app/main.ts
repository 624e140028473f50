import cluster from "node:cluster";
import { randomBytes } from "node:crypto";
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Logger } from "pino";
import { ConfigError, loadConfig, type Config } from "../src/config.js";
import { processLogger, type ProcessKind } from "./logger.js";
import { supervise } from "./supervisor.js";
import { CONFIG_EXIT_CODE } from "./lifecycle.js";

/*
 * The entry of `npm start`. What this process does follows PSS_ROLE:
 *
 * - `all` (the default): the supervisor (app/supervisor.ts). It forks the background
 *   worker, which lowers its own priority, then PSS_WORKERS api processes, so a busy fold
 *   never delays an answer; it restarts a child that dies and stops them in order.
 * - `api`: HTTP and MCP only, in this process, or in PSS_WORKERS processes sharing the port
 *   under a supervisor. The background work runs in a `worker` elsewhere.
 * - `worker`: the background work only, in this process, at the priority it was given.
 *
 * The supervisor gives each child its role in PSS_ROLE; a child never supervises. Only the
 * supervisor's path avoids loading Fastify and the backends' clients: it stays small.
 */

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(CONFIG_EXIT_CODE);
    }
    throw err;
  }
}

/**
 * Without PSS_ADMIN_KEY, a first start makes one and keeps it in DATA_DIR/admin-key
 * (mode 0600), so `npm start` alone gives a newcomer a working key. The key itself is never
 * logged; only where to find it. Written whole under another name, then linked in place:
 * of processes starting together on one DATA_DIR, one key wins and each reads it whole.
 */
function ensureLocalAdminKey(config: Config, log: Logger): Config {
  if (config.adminKey) return config;
  const file = resolve(config.dataDir, "admin-key");
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const draft = `${file}.${process.pid}.draft`;
    writeFileSync(draft, `pss_admin_${randomBytes(24).toString("base64url")}\n`, { mode: 0o600 });
    try {
      linkSync(draft, file);
      log.info({ file }, "created a bootstrap admin key (set PSS_ADMIN_KEY to choose your own)");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    } finally {
      rmSync(draft, { force: true });
    }
  }
  return { ...config, adminKey: readFileSync(file, "utf8").trim() };
}

/**
 * Exits with CONFIG_EXIT_CODE, the message printed once and no stack, when the namespace
 * refuses this configuration: a restart would only fail the same way.
 */
async function exitIfRefused(err: unknown): Promise<void> {
  // Loaded only on a failed start: the supervisor's path stays without the backends' clients.
  const { isLogLayoutMismatch } = await import("../infra/nats/log-layout.js");
  if (!isLogLayoutMismatch(err)) return;
  console.error(`configuration error: ${err.message}`);
  process.exit(CONFIG_EXIT_CODE);
}

async function main(): Promise<void> {
  const loaded = configOrExit();
  const supervising = cluster.isPrimary && (loaded.role === "all" || (loaded.role === "api" && loaded.workers > 1));
  const kind: ProcessKind = supervising ? "supervisor" : loaded.role === "worker" ? "worker" : "api";
  const log = processLogger(loaded.logLevel, kind);
  const config = ensureLocalAdminKey(loaded, log);
  try {
    if (supervising) return await supervise({ worker: config.role === "all", api: config.workers, idleWorker: config.role === "all" && config.workerScheduler === "idle" }, log);
    // Loaded here, not above: the supervisor has no use for them.
    const { runApi, runWorker } = await import("./member.js");
    if (kind === "worker") return await runWorker(config, log, { supervised: cluster.isWorker });
    return await runApi(config, log);
  } catch (err) {
    await exitIfRefused(err);
    log.fatal({ err }, "failed to start");
    process.exit(1);
  }
}

main().catch((err) => {
  console.error("failed to start:", err instanceof Error ? err.message : err);
  process.exit(1);
});
