import { readFileSync } from "node:fs";
import { connect, nkeyAuthenticator, tokenAuthenticator, usernamePasswordAuthenticator, type Authenticator, type NatsConnection } from "@nats-io/transport-node";

/** Where the service's NATS is and how it authenticates (Config's natsUrl and natsNkeySeedFile). */
export interface NatsTarget {
  /** May carry `user:password@` or `token@`. */
  natsUrl: string;
  /** File holding an nkey seed (`SU…`). */
  natsNkeySeedFile?: string | undefined;
}

/**
 * The server address without credentials, and the authenticators the target names.
 * nats.js ignores credentials written into a server URL, so they are taken out here.
 */
export function natsConnectOptions(target: NatsTarget): { servers: string; authenticator?: Authenticator[] } {
  const u = new URL(target.natsUrl);
  const authenticator: Authenticator[] = [];
  const user = decodeURIComponent(u.username);
  if (user !== "") {
    authenticator.push(u.password === "" ? tokenAuthenticator(user) : usernamePasswordAuthenticator(user, decodeURIComponent(u.password)));
  }
  if (target.natsNkeySeedFile) {
    let seed: string;
    try {
      seed = readFileSync(target.natsNkeySeedFile, "utf8").trim();
    } catch (err) {
      throw new Error(`NATS_NKEY_SEED_FILE: cannot read ${target.natsNkeySeedFile} (${(err as Error).message}); with PSS_SECURE_NATS=1, run infra/scripts/ensure-backends.sh first`, { cause: err });
    }
    authenticator.push(nkeyAuthenticator(new TextEncoder().encode(seed)));
  }
  const servers = `${u.protocol}//${u.host}`;
  return authenticator.length > 0 ? { servers, authenticator } : { servers };
}

/** Opens the service's NATS connection; reconnects forever so a NATS restart is survived. */
export async function connectNats(target: NatsTarget | string, name = "patient-state-service"): Promise<NatsConnection> {
  return connect({
    ...natsConnectOptions(typeof target === "string" ? { natsUrl: target } : target),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // Big batches travel as one message per patient; keep the client's buffer generous.
    pingInterval: 20_000,
    // Otherwise every request (each JetStream publish, each direct get) builds an Error
    // up front just to keep its stack: measurable on the hot paths.
    noAsyncTraces: true,
  });
}
