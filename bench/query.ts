/**
 * Log query builder on embedded ClickHouse: loads 1,000,000 then 10,000,000 synthetic
 * logs (10,000 patients, 20 types) into the real `logs` table (encodeRow's lines in
 * 100,000-row inserts, as the projector sends them), and times the queries of issue 5
 * through the real compiler and query path (FINAL included), median of 5. Then measures
 * the projector: logs stored in JetStream through the write path (12 realistic log types,
 * one log per message: the worst case), copied into ClickHouse by a fresh projector.
 *
 *   npm run bench:query [-- --sizes 1000000,10000000 --projector-logs 200000]
 *
 * PROFILE=file.cpuprofile writes a CPU profile of the projector's run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClickHouse } from "../infra/clickhouse/client.js";
import { migrate, MIGRATIONS } from "../infra/clickhouse/schema.js";
import { runQuery } from "../infra/clickhouse/rpc.js";
import { compileLogQuery } from "../query/index.js";
import { loadConfig } from "../src/config.js";
import { createServices } from "../app/services.js";
import { newPatient } from "../src/control/patient-records.js";
import { ClickHouseProjector } from "../actors/clickhouse-projector.js";
import { encodeRow, insertLogRows } from "../infra/clickhouse/log-rows.js";
import type { LogRecord } from "../readmodels/log-record.js";
import { destroyTopology } from "../infra/nats/topology.js";
import { LOG_MIX } from "./log-mix.js";
import { deleteKeys } from "../infra/redis/connection.js";
import { profileIfAsked } from "./profile.js";

const argv = process.argv;
const opt = (name: string, fallback: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1]! : fallback);
const sizes = opt("sizes", "1000000,10000000").split(",").map(Number);
const projectorLogs = Number(opt("projector-logs", "200000"));

const PATIENTS = 10_000;
const TYPES = Array.from({ length: 20 }, (_, i) => `type_${String(i).padStart(2, "0")}`);
const dir = mkdtempSync(join(tmpdir(), "pss-qbench-"));
const { client, insertRows } = createClickHouse({ dataDir: dir });
const db = "qbench";
await migrate(client, db);
const scope = { organization_id: "org_bench", project_id: "prj_bench" };
const pid = (i: number) => `pat_${String(i).padStart(26, "0")}`;

/** Inserts rows [from, to) and answers rows/s, the encoding in JavaScript included. */
async function load(from: number, to: number): Promise<number> {
  const t0 = performance.now();
  const chunk = 100_000;
  const base = Date.UTC(2025, 0, 1);
  for (let start = from; start < to; start += chunk) {
    const lines: string[] = [];
    for (let n = start; n < Math.min(to, start + chunk); n++) {
      const at = new Date(base + n * 1000).toISOString();
      const log = {
        ...scope,
        patient_id: pid(n % PATIENTS),
        id: `log_${String(n).padStart(26, "0")}`,
        log_type: TYPES[n % TYPES.length]!,
        timestamp: at,
        ingested_at: at,
        ...(n % 10 === 0 ? { trace: `visit-${n % 1000}` } : {}),
        payload: { score: n % 11, value: (n % 1000) / 10, flag: n % 2 === 0 },
      } as LogRecord;
      lines.push(encodeRow(log, n + 1));
    }
    await insertLogRows(insertRows, db, Buffer.from(lines.join("\n")));
  }
  return (to - from) / ((performance.now() - t0) / 1000);
}

const cohort = Array.from({ length: 1000 }, (_, i) => pid(i * 7));
const QUERIES: Record<string, unknown> = {
  count: { count: true },
  filtered_count: { count: true, filter: [{ field: "type", op: "eq", value: "type_03" }, { field: "payload.score", op: "gt", value: 5 }] },
  group_by_avg: { group_by: ["type"], aggregations: [{ op: "count", alias: "n" }, { op: "avg", field: "payload.score", alias: "avg_score" }] },
  cohort_1000_group_by: { patient_ids: cohort, group_by: ["type"], aggregations: [{ op: "avg", field: "payload.value", alias: "avg_value" }] },
};

async function time(body: unknown, s: typeof scope & { patient_id?: string }): Promise<number> {
  const q = compileLogQuery(body, s);
  const sql = q.sql.replace(/\bFROM logs\b/g, `FROM ${db}.logs`);
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await runQuery(client, { sql, params: q.params });
    runs.push(performance.now() - t0);
  }
  runs.sort((a, b) => a - b);
  return +runs[2]!.toFixed(1);
}

const results: Record<string, unknown> = {};
let loaded = 0;
for (const size of sizes) {
  const rate = await load(loaded, size);
  loaded = size;
  await client.command({ query: `OPTIMIZE TABLE ${db}.logs FINAL` }).catch(() => undefined);
  const timings: Record<string, number> = {};
  for (const [name, body] of Object.entries(QUERIES)) timings[name] = await time(body, scope);
  timings.one_patient_last_50 = await time({ limit: 50, order: [{ field: "timestamp", desc: true }] }, { ...scope, patient_id: pid(4242) });
  results[`${size.toLocaleString("en")} logs`] = { insert_rows_per_second: Math.round(rate), median_ms: timings };
  console.log(size, JSON.stringify(results[`${size.toLocaleString("en")} logs`]));
}
await client.close();
rmSync(dir, { recursive: true, force: true });

// The projector: logs stored through the write path, then copied by a fresh projector.
const ns = `qb${process.pid}`;
const pdir = mkdtempSync(join(tmpdir(), "pss-qbench-proj-"));
const cfg = loadConfig({ PSS_NAMESPACE: ns, DATA_DIR: pdir, PSS_ADMIN_KEY: "q".repeat(20), LOG_LEVEL: "silent" });
const s = await createServices(cfg, "api");
const { client: pc, insertRows: pInsertRows } = createClickHouse({ dataDir: pdir });
await migrate(pc, ns);
const pats: string[] = [];
const pscope = { organization_id: "org_default", project_id: "prj_default" };
for (let i = 0; i < 1000; i++) {
  const p = newPatient({}, pscope, new Date().toISOString());
  await s.patients.create(p);
  pats.push(p.id);
}
for (let n = 0; n < projectorLogs; n += 1000) {
  const logs = Array.from({ length: 1000 }, (_, i) => {
    const m = LOG_MIX[(n + i) % LOG_MIX.length]!;
    return { log_type: m.log_type, patient_id: pats[(n + i) % pats.length]!, timestamp: new Date(Date.UTC(2026, 0, 1) + (n + i) * 1000).toISOString(), payload: m.payload(n + i) };
  });
  await s.logWriter.writeBatch(pscope, logs, { source: "batch", atomic: false, at: ["bench"] });
}
const last = (await s.topology.jsm.streams.info(s.topology.names.logsStream)).state.last_seq;
const projector = new ClickHouseProjector(
  { js: s.topology.js, jsm: s.topology.jsm, names: s.topology.names, insertRows: pInsertRows, database: ns, redis: s.redis, redisPrefix: ns, log: console },
  `${ns}_clickhouse_bench`,
);
const stopProfile = await profileIfAsked();
const p0 = performance.now();
const cpu0 = process.cpuUsage();
await projector.start();
while (projector.projectedSeq < last) await new Promise((r) => setTimeout(r, 20));
const projectorRate = projector.stats.rows / ((performance.now() - p0) / 1000);
const cpu = process.cpuUsage(cpu0);
await stopProfile();
await projector.stop();
results.projector = {
  schema_version: MIGRATIONS.length,
  logs: projector.stats.rows,
  inserts: projector.stats.batches,
  logs_per_second: Math.round(projectorRate),
  // This process only (JavaScript and embedded ClickHouse, merges while it ran); nats-server's share is not in it.
  cpu_us_per_log: +((cpu.user + cpu.system) / projector.stats.rows).toFixed(1),
};
console.log(JSON.stringify(results, null, 2));
await pc.close();
await destroyTopology(s.nc, ns);
await deleteKeys(s.redis, `${ns}:*`);
await s.close();
rmSync(pdir, { recursive: true, force: true });
