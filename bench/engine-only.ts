/**
 * The state engine alone (a part's figure, not the service's): 50,000 logs for 2,000
 * patients are stored first (through the real write path), then a fresh engine in this
 * process applies every partition (engine.start(), no leases, no projector, no HTTP);
 * prints logs/s and CPU per log. Isolates the fold and its I/O from HTTP ingest. Each 100-log batch covers 10 patients
 * (ten logs per JetStream message); SPREAD=1 spreads it over 100 (one log per message, as
 * in bench/state.ts); ONE_PATIENT=1 gives each batch to one patient (a hundred logs per
 * message, as a job's replay writes them). BATCHES sets the number of batches (500).
 * Prints the process's peak RSS too: the whole backlog waits for the engine when it starts,
 * as after an outage. PROFILE=file.cpuprofile profiles the apply phase.
 *
 *   [SPREAD=1 | ONE_PATIENT=1] [BATCHES=500] [PROFILE=engine.cpuprofile] npx tsx bench/engine-only.ts
 */
import { loadConfig } from "../src/config.js";
import { createServices } from "../app/services.js";
import { destroyTopology } from "../infra/nats/topology.js";
import { newPatient } from "../src/control/patient-records.js";
import { StateEngine } from "../actors/state-engine.js";
import { LOG_MIX } from "./log-mix.js";
import { deleteKeys } from "../infra/redis/connection.js";
import { profileIfAsked } from "./profile.js";
import { rss } from "./support.js";
const cfg = loadConfig({ ...process.env, PSS_NAMESPACE: `eng${process.pid}`, DATA_DIR: `/tmp/eng${process.pid}`, PSS_ADMIN_KEY: "x".repeat(20), LOG_LEVEL: "silent" });
const s = await createServices(cfg, "api");
const scope = { organization_id: "org_default", project_id: "prj_default" };
const pats: string[] = [];
for (let i = 0; i < 2000; i++) { const p = newPatient({}, scope, new Date().toISOString()); await s.patients.create(p); pats.push(p.id); }
let n = 0; const base = Date.UTC(2026, 4, 1);
for (let b = 0; b < Number(process.env.BATCHES ?? 500); b++) {
  const logs = Array.from({ length: 100 }, (_, i) => { const m = LOG_MIX[n % LOG_MIX.length]!; const k = n++; return { log_type: m.log_type, patient_id: pats[process.env.SPREAD ? (b * 100 + i) % 2000 : process.env.ONE_PATIENT ? b % 2000 : (b * 10 + (i % 10)) % 2000]!, timestamp: new Date(base + k * 1000).toISOString(), payload: m.payload(k) }; });
  await s.logWriter.writeBatch(scope, logs, { source: "batch", atomic: false, at: ["b"] });
}
console.log("ingested", n);
const engine = new StateEngine({ js: s.topology.js, jsm: s.topology.jsm, names: s.topology.names, store: s.stateStore, patients: s.patients, log: console }, {
  // The service's settings (PSS_MAX_ACTIVE_PATIENTS and the rest, from the environment), as its worker runs the engine.
  idleMs: cfg.actorIdleMs, viewDebounceMs: cfg.viewDebounceMs, renderWaitMs: cfg.renderWaitMs, maxActive: cfg.maxActivePatients, maxInflightBytes: cfg.stateInflightBytes,
});
const stopProfile = await profileIfAsked();
const c0 = process.cpuUsage(); const t0 = performance.now();
await engine.start();
while (engine.stats.applied_logs < n) { await new Promise((r) => setTimeout(r, 20)); if (process.env.DEBUG_ENGINE) console.log(engine.stats, engine.activeCount()); }
const c = process.cpuUsage(c0); const dt = (performance.now() - t0) / 1000;
await stopProfile();
const perMessage = process.env.SPREAD ? 1 : process.env.ONE_PATIENT ? 100 : 10;
console.log(JSON.stringify({ what: "engine alone (in process, all partitions, no projector)", logs_per_message: perMessage, partitions: engine.partitions().length, logs: n, logs_per_second: Math.round(n / dt), cpu_us_per_log: +((c.user + c.system) / n).toFixed(1), peak_rss_mb: rss(process.pid).peak, in_flight: engine.inflightStats(), stats: engine.stats }));
await engine.stop();
await destroyTopology(s.nc, cfg.namespace);
await deleteKeys(s.redis, `${cfg.namespace}:*`);
await s.close();
