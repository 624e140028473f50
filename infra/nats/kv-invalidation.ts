import { KvWatchInclude, type KV, type KvEntry } from "@nats-io/kv";

/**
 * Calls `onChange(entry)` for every later write to the bucket, from this or any other
 * instance (a delete or purge arrives as an entry whose operation says so). In-process
 * caches of control-plane records (keys, projects, patients) follow it, so a revocation
 * or deprecation takes effect at once. Returns a stop function.
 */
export async function watchKeys(kv: KV, onChange: (entry: KvEntry) => void): Promise<() => void> {
  const iter = await kv.watch({ include: KvWatchInclude.UpdatesOnly, ignoreDeletes: false });
  void (async () => {
    for await (const e of iter) onChange(e);
  })().catch(() => {
    // The iterator ends when the connection closes.
  });
  return () => iter.stop();
}

/** The JSON value of a watched entry, or null for a delete or purge. */
export function entryValue<T>(e: KvEntry): T | null {
  return e.operation === "PUT" && e.length > 0 ? e.json<T>() : null;
}
