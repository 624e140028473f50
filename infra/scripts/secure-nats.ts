/**
 * Writes the configuration of a NATS server that keeps device gateways apart from the
 * service (infra/nats/secure-server.conf.template) into `{DATA_DIR}/nats`, making the
 * nkeys on the first run, and prints `CONFIG PORT` for infra/scripts/ensure-backends.sh
 * (which starts it when PSS_SECURE_NATS=1). Arguments add gateway keys for one
 * organization (`org_…`) or project (`org_….prj_…`).
 *
 *   node dist/infra/scripts/secure-nats.js [SCOPE ...]     (as built by `npm run build`)
 *   npx tsx infra/scripts/secure-nats.ts [SCOPE ...]       (from the source)
 *
 * Environment: NATS_URL (the port to listen on; default 4222), DATA_DIR, PSS_NAMESPACE,
 * NATS_STORE_DIR (JetStream's store; default `{DATA_DIR}/nats/store`), and
 * PSS_SECURE_NATS_LISTEN (`host:port`; default loopback at NATS_URL's port: gateways on
 * other machines need an address they reach).
 */
import { resolve } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.js";
import { writeSecureNatsConfig } from "../nats/secure-config.js";

try {
  const config = loadConfig();
  const port = new URL(config.natsUrl).port || "4222";
  const dir = resolve(config.dataDir, "nats");
  const files = writeSecureNatsConfig({
    dir,
    listen: process.env.PSS_SECURE_NATS_LISTEN || `127.0.0.1:${port}`,
    namespace: config.namespace,
    ...(process.env.NATS_STORE_DIR ? { storeDir: resolve(process.env.NATS_STORE_DIR) } : {}),
    gateways: process.argv.slice(2),
  });
  for (const [scope, file] of Object.entries(files.gatewaySeeds)) console.error(`gateway key (${scope === "all" ? "every organization" : scope}): ${file}`);
  console.error(`service key: ${files.serviceSeed}`);
  console.log(`${files.config} ${port}`);
} catch (err) {
  console.error(`secure-nats: ${err instanceof ConfigError || err instanceof Error ? err.message : String(err)}`);
  process.exit(2);
}
