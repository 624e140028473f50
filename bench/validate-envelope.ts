/**
 * validateEnvelope per log over the bench mix: the first step of every log's write path
 * (POST /v1/logs/batch, the device feed, an ingestion job's validation). Prints the
 * microseconds of CPU per log of each round and their median: CPU time, so that other
 * work on the machine sways it less than wall time.
 *
 *   npm run build:bench && node dist/bench/validate-envelope.js [ROUNDS]
 */
import { validateEnvelope } from "../src/logs/envelope.js";
import { LOG_MIX } from "./log-mix.js";

const LOGS = 100_000;
const rounds = Number(process.argv[2] ?? 7);

const logs = Array.from({ length: LOGS }, (_, i) => {
  const m = LOG_MIX[i % LOG_MIX.length]!;
  return { log_type: m.log_type, patient_id: `pat_${i % 1000}`, timestamp: "2026-05-01T08:00:00Z", idempotency_key: `key-${i}`, payload: m.payload(i) };
});
const at = ["body", "logs", 0];

function round(): number {
  let failed = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < LOGS; i++) if (!validateEnvelope(logs[i], at, "2026-05-01T08:00:01.000Z").ok) failed++;
  const used = process.cpuUsage(start);
  const us = (used.user + used.system) / LOGS;
  if (failed > 0) throw new Error(`${failed} logs of the mix failed validation`);
  return us;
}

round(); // warm-up: the schemas compile and V8 optimizes on first use
const times = Array.from({ length: rounds }, round);
const median = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
console.log(JSON.stringify({ cpu_us_per_log: times.map((t) => Number(t.toFixed(3))), median: Number(median.toFixed(3)) }));
