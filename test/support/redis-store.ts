import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { connectRedis, deleteKeys, type Redis } from "../../infra/redis/connection.js";
import { PatientStateStore, type StateEvent } from "../../infra/redis/state-store.js";

/**
 * A PatientStateStore on the machine's Redis under a key prefix of its own (`name` and
 * random bytes), opened before the file's tests and its keys removed after them.
 */
export function storeInRedis(name: string): { readonly redis: Redis; readonly store: PatientStateStore } {
  const prefix = `${name}${randomBytes(4).toString("hex")}`;
  const held: { redis?: Redis; store?: PatientStateStore } = {};
  beforeAll(async () => {
    held.redis = await connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    held.store = new PatientStateStore(held.redis, prefix);
  });
  afterAll(async () => {
    if (!held.redis) return;
    await deleteKeys(held.redis, `${prefix}:*`);
    await held.redis.quit();
  });
  return {
    get redis() {
      return held.redis!;
    },
    get store() {
      return held.store!;
    },
  };
}

/** Audit row number `n` (any content will do where only the numbering is under test). */
export const auditRow = (n: number, log_type = "user_login"): StateEvent => ({
  id: `evt_${n}`, trigger: "log", log_type, status: "no_change", triggered_at: "2026-05-01T00:00:00.000Z",
  completed_at: "2026-05-01T00:00:01.000Z", source_event_log_id: `log_${n}`, log_timestamp: "2026-05-01T00:00:00.000Z", changes: [],
});

/** Audit rows numbered `from` to `to`. */
export const auditRows = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => auditRow(from + i));
