import { createClient, type RedisClientType } from "redis";

export type Redis = RedisClientType;

/**
 * Redis holds only rebuildable read models and caches. Commands queue while it
 * reconnects, so a Redis restart delays reads instead of failing the write path.
 */
export async function connectRedis(url: string): Promise<Redis> {
  const client = createClient({ url, socket: { reconnectStrategy: (retries) => Math.min(50 * retries, 2_000) } }) as Redis;
  client.on("error", () => {
    // Reconnection is automatic; health reports the outage.
  });
  await client.connect();
  return client;
}
