/**
 * Removes every stream, bucket and Redis key of one namespace (PSS_NAMESPACE): for
 * throw-away environments and test leftovers. Irreversible.
 *
 *   npx tsx infra/scripts/drop-namespace.ts NAMESPACE
 */
import { connectNats } from "../nats/connection.js";
import { destroyTopology } from "../nats/topology.js";
import { connectRedis, deleteKeys } from "../redis.js";

const ns = process.argv[2];
if (!ns || !/^[a-z][a-z0-9_]{0,30}$/.test(ns)) {
  console.error("usage: drop-namespace.ts NAMESPACE");
  process.exit(2);
}
const nc = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222");
await destroyTopology(nc, ns);
await nc.close();
const redis = await connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const n = await deleteKeys(redis, `${ns}:*`);
await redis.quit();
console.log(`dropped namespace ${ns} (${n} Redis keys)`);
