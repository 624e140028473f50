import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { nkeys } from "@nats-io/transport-node";

/** The configuration template (accounts, users, permissions): see its comments. */
export const SECURE_TEMPLATE = resolve(dirname(fileURLToPath(import.meta.url)), "secure-server.conf.template");

export interface SecureNatsOptions {
  /** Where the keys and the configuration go (created mode 0700), e.g. `{DATA_DIR}/nats`. */
  dir: string;
  /** `host:port` the server listens on. */
  listen: string;
  /** PSS_NAMESPACE: the subject root gateways may publish under. */
  namespace: string;
  /** JetStream's store directory. @default `{dir}/store` */
  storeDir?: string;
  /**
   * Gateway keys to have besides `all` (every organization's ingest subjects): an
   * organization id (`org_…`) or `org_….prj_…`, each a key that publishes to that one's
   * subjects only. Keys made on an earlier run are kept.
   */
  gateways?: string[];
}

export interface SecureNatsFiles {
  /** The server configuration: `nats-server -c` it. */
  config: string;
  /** The service's nkey seed (NATS_NKEY_SEED_FILE). */
  serviceSeed: string;
  /** Gateway seed files by scope (`all`, an organization, or `organization.project`). */
  gatewaySeeds: Record<string, string>;
}

/** An id as the service makes them (and a subject token can carry). */
const ID = "[A-Za-z0-9_-]{1,64}";
const SCOPE = new RegExp(`^${ID}(\\.${ID})?$`);

/** The seed in `file`, made (mode 0600) the first time; its public key. */
function userKey(file: string): string {
  if (!existsSync(file)) writeFileSync(file, `${new TextDecoder().decode(nkeys.createUser().getSeed())}\n`, { mode: 0o600 });
  return nkeys.fromSeed(new TextEncoder().encode(readFileSync(file, "utf8").trim())).getPublicKey();
}

/**
 * Writes (again) the secured server's configuration from the template, making the nkeys
 * it names on the first run: the service's, and one per gateway scope. Run it again
 * after adding a scope (or deleting a gateway's seed file to revoke it), then reload the
 * server (`nats-server --signal reload=PIDFILE`). Only public keys go into the configuration.
 */
export function writeSecureNatsConfig(o: SecureNatsOptions): SecureNatsFiles {
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(o.namespace)) throw new Error(`namespace "${o.namespace}" is not a PSS_NAMESPACE`);
  const gatewayDir = join(o.dir, "gateways");
  mkdirSync(gatewayDir, { recursive: true, mode: 0o700 });
  chmodSync(o.dir, 0o700);
  for (const scope of o.gateways ?? []) {
    if (!SCOPE.test(scope)) throw new Error(`gateway scope "${scope}" must be an organization id or organization.project ids`);
    userKey(join(gatewayDir, `${scope}.nk`));
  }
  userKey(join(gatewayDir, "all.nk"));
  const gatewaySeeds: Record<string, string> = {};
  const users: string[] = [];
  for (const f of readdirSync(gatewayDir).filter((f) => f.endsWith(".nk")).sort()) {
    const scope = f.slice(0, -3);
    if (scope !== "all" && !SCOPE.test(scope)) continue;
    gatewaySeeds[scope] = join(gatewayDir, f);
    const subjects = scope === "all" ? `${o.namespace}.ingest.>` : `${o.namespace}.ingest.${scope}${scope.includes(".") ? "" : ".*"}`;
    users.push(
      `      { nkey: "${userKey(gatewaySeeds[scope])}", permissions: { publish: { allow: ["${subjects}"] }, subscribe: { allow: ["_INBOX.>"] } }, allowed_connection_types: ["STANDARD"] }`,
    );
  }
  const serviceSeed = join(o.dir, "service.nk");
  const fields: Record<string, string> = {
    listen: o.listen,
    store_dir: o.storeDir ?? join(o.dir, "store"),
    ns: o.namespace,
    service_nkey: userKey(serviceSeed),
    gateway_users: users.join("\n"),
  };
  const text = readFileSync(SECURE_TEMPLATE, "utf8").replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
    const v = fields[k];
    if (v === undefined) throw new Error(`${SECURE_TEMPLATE}: no value for {{${k}}}`);
    return v;
  });
  const config = join(o.dir, "server.conf");
  writeFileSync(config, text, { mode: 0o600 });
  return { config, serviceSeed, gatewaySeeds };
}
