/**
 * What waiting for the audit entry costs a read. Every audited answer is sent only once
 * JetStream has stored its entry (app/http/plugins/audit.ts), so a read pays one
 * AuditLog.append: a JetStream publish acknowledged by the file-backed audit stream.
 *
 * Against the local nats-server and Redis, in-process (app.inject, no socket):
 * 1. AuditLog.append alone, one at a time, then offered at 2,000/s;
 * 2. GET /v1/state/{pid}/stable over 200 patients, one at a time (reads at a rate need
 *    the service in its own process: `npm run bench:state`).
 * Paced appends are open loop: latency counts from each one's scheduled start. Run it
 * against the build before the change (fire-and-forget audit) to compare.
 *
 *   npx tsx bench/audit-append.ts [-- --seconds 5 --rate 2000]
 */
import type { AuditEntry } from "../src/audit/audit-log.js";
import { startStack } from "../test/support/stack.js";
import { arg, percentile } from "./support.js";

const seconds = arg("seconds", 5);
const rate = arg("rate", 2_000);

const t = await startStack();
const ms = (ns: bigint) => Number(ns) / 1e6;
function summary(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `p50 ${percentile(s, 50).toFixed(2)} ms, p99 ${percentile(s, 99).toFixed(2)} ms, max ${s[s.length - 1]!.toFixed(2)} ms (${s.length})`;
}

/** Runs `op` one at a time `n` times; each duration in ms. */
async function serial(n: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await op(i);
    out.push(ms(process.hrtime.bigint() - t0));
  }
  return out;
}

/** Starts `op` at `perSecond` for `secs`, whatever finished; each duration from its scheduled start, in ms. */
async function paced(perSecond: number, secs: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  const running: Promise<void>[] = [];
  const t0 = process.hrtime.bigint();
  const total = perSecond * secs;
  for (let started = 0; started < total; ) {
    const due = Math.min(total, Math.floor((ms(process.hrtime.bigint() - t0) / 1000) * perSecond));
    for (; started < due; started++) {
      const scheduled = t0 + BigInt(Math.round((started / perSecond) * 1e9));
      const i = started;
      running.push(op(i).then(() => void out.push(ms(process.hrtime.bigint() - scheduled))));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(running);
  return out;
}

try {
  const entry = (i: number): AuditEntry => ({
    at: new Date().toISOString(), organization_id: "org_default", project_id: "prj_default", key_id: "key_admin", credential: "api_key",
    method: "GET", route: "/v1/state/:pid/stable", tool: null, patient_id: `pat_${i}`, patient_ids: [`pat_${i}`], status: 200, request_id: `bench-${i}`,
  });
  await serial(500, (i) => t.services.audit.append(entry(i)));
  console.log(`append, one at a time: ${summary(await serial(3_000, (i) => t.services.audit.append(entry(i))))}`);
  console.log(`append at ${rate}/s: ${summary(await paced(rate, seconds, (i) => t.services.audit.append(entry(i))))}`);

  const pids: string[] = [];
  for (let i = 0; i < 200; i++) pids.push((await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id);
  const read = (i: number) => t.app.inject({ method: "GET", url: `/v1/state/${pids[i % pids.length]}/stable`, headers: t.auth });
  await serial(1_000, read);
  console.log(`state read, one at a time: ${summary(await serial(3_000, read))}`);
} finally {
  await t.close();
}
