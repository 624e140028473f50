import { createClient, type RedisClientType } from "redis";

export type Redis = RedisClientType;

/**
 * Redis holds only rebuildable read models and caches. Commands queue while it
 * reconnects, so a Redis restart delays reads instead of failing the write path, but
 * each for at most `commandTimeoutMs`: past it the command fails (a 503 to a request)
 * rather than holding the request for as long as Redis stays away.
 */
export async function connectRedis(url: string, commandTimeoutMs = 5_000): Promise<Redis> {
  const client = createClient({
    url,
    socket: { reconnectStrategy: (retries) => Math.min(50 * retries, 2_000) },
    commandOptions: { timeout: commandTimeoutMs },
  }) as Redis;
  client.on("error", () => {
    // Reconnection is automatic; health reports the outage.
  });
  await client.connect();
  return client;
}

/** Keys matching `pattern`, scanned in pages (never KEYS, which blocks Redis). */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of redis.scanIterator({ MATCH: pattern, COUNT: 1000 })) out.push(...(Array.isArray(batch) ? batch : [batch]));
  return out;
}

/** Deletes every key matching `pattern` (a namespace's `{ns}:*`); returns how many went. */
export async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let n = 0;
  for await (const batch of redis.scanIterator({ MATCH: pattern, COUNT: 1000 })) {
    const list = Array.isArray(batch) ? batch : [batch];
    if (list.length > 0) n += await redis.del(list);
  }
  return n;
}
