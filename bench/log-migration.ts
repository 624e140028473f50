/**
 * The first log layout's migration alone: a namespace as the first layout left it (LOGS
 * logs over PATIENTS patients, 1 to 4 logs per message, built by
 * test/support/layout1-namespace.ts), then the copy ensureTopology runs on it, timed. Prints
 * messages and logs per second of the whole migration (copy, purge, record). Runs with tsx,
 * as it builds its namespace with the tests' helper:
 *
 *   [LOGS=100000] [PATIENTS=100] [WINDOW=256] npx tsx bench/log-migration.ts
 */
import { connectNats } from "../infra/nats/connection.js";
import { destroyTopology, ensureTopology } from "../infra/nats/topology.js";
import { loadConfig } from "../src/config.js";
import { buildLayout1Namespace } from "../test/support/layout1-namespace.js";

const logs = Number(process.env.LOGS ?? 100_000);
const patients = Number(process.env.PATIENTS ?? 100);
const ns = `mig${process.pid}`;
const t0 = performance.now();
const l1 = await buildLayout1Namespace({ ns, patients, logsPerPatient: Math.ceil(logs / patients) });
console.log(`built ${ns}: ${l1.logs} logs in ${l1.messages} messages on the first layout's subjects (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
const nc = await connectNats(loadConfig({ PSS_NAMESPACE: ns }));
try {
  const t1 = performance.now();
  await ensureTopology(nc, ns, { migration: { window: Number(process.env.WINDOW ?? 256) } });
  const s = (performance.now() - t1) / 1000;
  console.log(`migrated in ${s.toFixed(1)} s: ${Math.round(l1.messages / s)} messages/s, ${Math.round(l1.logs / s)} logs/s`);
} finally {
  await destroyTopology(nc, ns);
  await nc.drain();
}
