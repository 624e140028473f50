import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { loadConfig, type Config } from "../../src/config.js";
import { createServices, type ServiceOptions, type Services } from "../../app/services.js";
import { buildApp } from "../../app/http/app.js";
import { destroyTopology } from "../../infra/nats/topology.js";
import { deleteKeys } from "../../infra/redis/connection.js";

export interface TestStack {
  config: Config;
  services: Services;
  app: FastifyInstance;
  adminKey: string;
  /** Authorization header for the bootstrap key. */
  auth: { authorization: string };
  close(): Promise<void>;
}

/**
 * The real service against the machine's NATS and Redis and an embedded ClickHouse, in
 * a namespace of its own (streams, buckets, subjects, Redis keys), removed on close.
 */
export async function startStack(env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<TestStack> {
  const ns = `t${randomBytes(5).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "pss-test-"));
  const adminKey = `admin-${randomBytes(16).toString("hex")}`;
  // A member alone on its namespace has no one to fail over to: a long lease TTL keeps a
  // test process that other test files starve of CPU from losing (and restarting) its work.
  const config = loadConfig({ PSS_NAMESPACE: ns, DATA_DIR: dataDir, PSS_ADMIN_KEY: adminKey, LOG_LEVEL: "silent", PSS_LEASE_TTL_MS: "30000", ...env });
  const services = await createServices(config, "all", options);
  const app = await buildApp(services, { logger: false });
  await app.ready();
  return {
    config,
    services,
    app,
    adminKey: config.adminKey ?? adminKey,
    auth: { authorization: `Bearer ${config.adminKey ?? adminKey}` },
    // `env` may name the namespace (one a test built beforehand): that one is dropped.
    close: () => closeAndDrop(app, services, config.namespace, dataDir),
  };
}

/** Stops a test service and removes its namespace (streams, buckets, Redis keys) and data directory. */
export async function closeAndDrop(app: FastifyInstance, services: Services, ns: string, dataDir: string): Promise<void> {
  await app.close();
  // Stop writers first, so nothing lands in Redis after the clean-up.
  await services.stopBackground();
  await deleteKeys(services.redis, `${ns}:*`);
  await destroyTopology(services.nc, ns);
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
}

/** Calls `f` until `ok` holds of its answer, or `ms` have passed; returns the last answer. */
export async function eventually<T>(f: () => Promise<T>, ok: (v: T) => boolean, ms = 5_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}
