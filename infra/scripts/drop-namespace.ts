/**
 * Removes every stream, bucket and Redis key of one namespace (PSS_NAMESPACE): for
 * throw-away environments and test leftovers. Irreversible.
 *
 *   npx tsx infra/scripts/drop-namespace.ts NAMESPACE
 */
import { loadConfig } from "../../src/config.js";
import { connectNats } from "../nats/connection.js";
import { destroyTopology } from "../nats/topology.js";
import { connectRedis, deleteKeys } from "../redis/connection.js";

const ns = process.argv[2];
if (!ns || !/^[a-z][a-z0-9_]{0,30}$/.test(ns)) {
  console.error("usage: drop-namespace.ts NAMESPACE");
  process.exit(2);
}
// NATS_URL, REDIS_URL and the service's NATS credential as the service reads them.
const config = loadConfig();
const nc = await connectNats(config);
await destroyTopology(nc, ns);
await nc.close();
const redis = await connectRedis(config.redisUrl);
const n = await deleteKeys(redis, `${ns}:*`);
await redis.quit();
console.log(`dropped namespace ${ns} (${n} Redis keys)`);
