import { KvWatchInclude, type KV } from "@nats-io/kv";

/**
 * Calls `onChange(key)` for every later write to the bucket, from this or any other
 * instance. In-process caches of control-plane records (keys, projects, patients)
 * drop entries with it, so a revocation or deprecation takes effect at once.
 * Returns a stop function.
 */
export async function watchKeys(kv: KV, onChange: (key: string) => void): Promise<() => void> {
  const iter = await kv.watch({ include: KvWatchInclude.UpdatesOnly, ignoreDeletes: false });
  void (async () => {
    for await (const e of iter) onChange(e.key);
  })().catch(() => {
    // The iterator ends when the connection closes.
  });
  return () => iter.stop();
}
