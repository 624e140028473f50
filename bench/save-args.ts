/**
 * The state store's save of changed modules on its own, against the real Redis: 200
 * patients of 100 folded logs each, saved ten times over, four rounds. Prints wall time,
 * this process's CPU and Redis's CPU (INFO cpu) per save. For comparing how a save's
 * arguments are encoded, where the service's CPU and Redis's share two cores.
 *
 *   npx tsx bench/save-args.ts
 */
import { applyInOrder, emptyStored } from "../src/state/apply-logs.js";
import { PatientStateStore } from "../infra/redis/state-store.js";
import { connectRedis, deleteKeys } from "../infra/redis/connection.js";
import { mixLogRecords } from "./log-mix.js";

const PATIENTS = 200;
const redis = await connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const prefix = `savebench${process.pid}`;
const store = new PatientStateStore(redis, prefix);
const folded = mixLogRecords(PATIENTS, 100).map((logs, p) => applyInOrder(emptyStored(`pat_${p}`, "UTC", "org", "prj"), [{ seq: 1, logs }], new Date().toISOString()));
// The changed-modules save writes only where a state already is.
for (const r of folded) await store.save(r.stored, [], undefined);

const redisCpu = async () => {
  const info = await redis.info("cpu");
  return Number(/used_cpu_user:([\d.]+)/.exec(info)![1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)![1]);
};
try {
  for (let round = 0; round < 4; round++) {
    const r0 = await redisCpu();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    // FULL=1: whole-state saves (a patient's first save, a rebuild) instead of changed modules.
    for (let k = 0; k < 10; k++) await Promise.all(folded.map((r) => store.save(r.stored, r.events, process.env.FULL ? undefined : [...r.changed], r.stored.applied_seq)));
    const n = PATIENTS * 10;
    const c = process.cpuUsage(c0);
    const r1 = await redisCpu();
    console.log(`${n} ${process.env.FULL ? "full" : "changed-module"} saves of 100 logs: ${(((performance.now() - t0) / n) * 1000).toFixed(0)} us wall, ${((c.user + c.system) / n).toFixed(0)} us CPU here, ${(((r1 - r0) * 1e6) / n).toFixed(0)} us in Redis, per save`);
  }
} finally {
  await deleteKeys(redis, `${prefix}:*`);
  await redis.quit();
}
