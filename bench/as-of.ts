/**
 * A state read at a past time for one patient with a long history: `--logs` (10,000) logs
 * of the benches' mix, sent through POST /v1/logs/batch `--per-batch` (100) at a time (one
 * JetStream message per batch), event times a minute apart over a week, each batch's
 * reversed (so most logs arrive after a later one: late). Then, `--runs` (5) times:
 *
 * - read: the patient's whole history from JetStream (PatientLog.read), alone;
 * - fold: stateAt over those logs with as_of halfway, alone;
 * - as_of read: HorizonReader.snapshot (authorize, read, fold) as the routes call it;
 * - REST: GET .../event-modules/symptoms?as_of=…, and .../views/symptom_snapshot?as_of=…;
 * - diff: GET .../diff?from=<halfway>&to=<end> (one read, two states);
 * - the plain cached read, for comparison.
 *
 * In-process against the local NATS and Redis (the test stack, a namespace of its own).
 * Prints the median and range of each, in ms.
 *
 *   npx tsx bench/as-of.ts [-- --logs 10000 --per-batch 100 --runs 5]
 */
import { stateAt } from "../readmodels/as-of.js";
import type { LogRecord } from "../readmodels/log-record.js";
import { BOOTSTRAP } from "../src/control/bootstrap.js";
import { PatientLog } from "../src/logs/patient-log.js";
import { startStack } from "../test/support/stack.js";
import { LOG_MIX } from "./log-mix.js";
import { arg } from "./support.js";

const total = arg("logs", 10_000);
const perBatch = arg("per-batch", 100);
const runs = arg("runs", 5);

const t = await startStack({ LOG_LEVEL: "silent" });
try {
  const pid: string = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const start = Date.UTC(2026, 4, 1);
  const at = (k: number) => new Date(start + k * 60_000).toISOString();
  const t0 = Date.now();
  for (let b = 0; b < total; b += perBatch) {
    const n = Math.min(perBatch, total - b);
    const logs = Array.from({ length: n }, (_, i) => {
      const k = b + i;
      const m = LOG_MIX[k % LOG_MIX.length]!;
      return { log_type: m.log_type, patient_id: pid, timestamp: at(b + n - 1 - i), payload: m.payload(k) };
    });
    const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } });
    if (r.json().accepted !== n) throw new Error(`batch at ${b}: ${r.body.slice(0, 300)}`);
  }
  const writeS = (Date.now() - t0) / 1000;
  const mid = at(Math.floor(total / 2));
  const end = at(total);
  // The bootstrap key reads its organization's default project.
  const owner = { organization_id: BOOTSTRAP.organization_id, project_id: BOOTSTRAP.project_id, patient_id: pid };

  const timed = async <T>(f: () => Promise<T>): Promise<[number, T]> => {
    const s = process.hrtime.bigint();
    const v = await f();
    return [Number(process.hrtime.bigint() - s) / 1e6, v];
  };
  const get = async (url: string) => {
    const r = await t.app.inject({ method: "GET", url, headers: t.auth });
    if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body.slice(0, 300)}`);
    return r;
  };
  const log = new PatientLog(t.services.topology);
  const series: Record<string, number[]> = {};
  const add = (k: string, ms: number) => (series[k] ??= []).push(ms);
  for (let run = 0; run < runs + 1; run++) {
    const [readMs, logs] = await timed(async () => {
      const out: LogRecord[] = [];
      for await (const m of log.read(owner)) for (const l of m.data.logs) out.push(l);
      return out;
    });
    if (logs.length !== total) throw new Error(`read ${logs.length} logs, expected ${total}`);
    const [foldMs] = await timed(async () => stateAt({ patient_id: pid, timezone: "UTC", date_of_birth: null }, logs, { as_of: mid }));
    const principal = { organization_id: owner.organization_id, project_id: owner.project_id } as never;
    const [snapMs] = await timed(() => t.services.horizonReader.snapshot(principal, pid, { as_of: mid }));
    const [restMs] = await timed(() => get(`/v1/state/${pid}/event-modules/symptoms?as_of=${mid}`));
    const [viewMs] = await timed(() => get(`/v1/state/${pid}/views/symptom_snapshot?as_of=${mid}`));
    const [diffMs, diff] = await timed(() => get(`/v1/state/${pid}/diff?from=${mid}&to=${end}`));
    const [plainMs] = await timed(() => get(`/v1/state/${pid}/event-modules/symptoms`));
    // The first run warms the JIT and the connections: not counted.
    if (run === 0) {
      console.error(`diff answer: ${diff.body.length} bytes, ${diff.json().modules.length} modules, ${diff.json().summarized} fields summarized`);
      continue;
    }
    add("read_history_ms", readMs);
    add("fold_ms", foldMs);
    add("as_of_snapshot_ms", snapMs);
    add("rest_event_module_as_of_ms", restMs);
    add("rest_view_as_of_ms", viewMs);
    add("rest_diff_ms", diffMs);
    add("rest_plain_cached_ms", plainMs);
  }
  const stat = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return `${s[Math.floor(s.length / 2)]!.toFixed(0)} [${s[0]!.toFixed(0)}-${s.at(-1)!.toFixed(0)}]`;
  };
  console.log(JSON.stringify({ logs: total, per_batch: perBatch, messages: Math.ceil(total / perBatch), write_s: +writeS.toFixed(1), runs, ...Object.fromEntries(Object.entries(series).map(([k, v]) => [k, stat(v)])) }, null, 2));
} finally {
  await t.close();
}
