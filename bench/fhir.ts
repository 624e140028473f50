/**
 * FHIR resources per second through POST /v1/fhir (collection Bundles of 100 entries, each
 * a different resource for one of 1,000 patients, no idempotency keys: each entry keyed by
 * its content), against the whole service as `npm start` runs it; then the same logs those
 * Bundles map to, sent through POST /v1/logs/batch in 100-log batches with the same
 * clients, so the two routes' rates come from one run on one machine.
 *
 *   npm run bench:fhir [-- --seconds 15 --clients 8 --patients 1000]
 */
import { randomBytes } from "node:crypto";
import { connect } from "@nats-io/transport-node";
import { deriveLogs } from "../fhir/inbound/index.js";
import type { Resource } from "../fhir/types.js";
import { destroyTopology } from "../infra/nats/topology.js";
import { FHIR_MIX } from "./fhir-mix.js";
import { arg, call, natsServerCpu, percentile, startService } from "./support.js";

const seconds = arg("seconds", 15);
const clients = arg("clients", 8);
const patientsTotal = arg("patients", 1000);
const perBundle = 100;

const svc = await startService({}, clients);
try {
  const patients: string[] = [];
  for (let i = 0; i < patientsTotal; i += 1000) {
    const r = await call(svc.pool, svc.adminKey, "POST", "/v1/patients/batch", { patients: Array.from({ length: Math.min(1000, patientsTotal - i) }, (_, j) => ({ first_name: `F${i + j}` })) });
    patients.push(...r.json.items.map((x: { id: string }) => x.id));
  }
  const run = randomBytes(4).toString("hex");
  let seq = 0;
  const resource = (): Resource => {
    const n = seq++;
    const r = FHIR_MIX[n % FHIR_MIX.length]!(`${run}-${n}`, n);
    r[r.resourceType === "AllergyIntolerance" || r.resourceType === "Immunization" ? "patient" : "subject"] = { reference: `Patient/${patients[n % patients.length]}` };
    return r as unknown as Resource;
  };
  const bundle = () => ({ resourceType: "Bundle", type: "collection", entry: Array.from({ length: perBundle }, () => ({ resource: resource() })) });

  /** Closed loop for `seconds`: each client sends the next body as soon as its answer is back. */
  async function load(path: string, next: () => unknown, count: (json: any) => { ok: number; logs: number }) {
    const latencies: number[] = [];
    let ok = 0;
    let logs = 0;
    let failed = 0;
    const cpu0 = svc.cpuSeconds();
    const roles0 = svc.cpuByRole();
    const nats0 = natsServerCpu();
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < end) {
          const b = JSON.stringify(next());
          const s = performance.now();
          const r = await call(svc.pool, svc.adminKey, "POST", path, b);
          latencies.push(performance.now() - s);
          if (r.status !== 200) failed++;
          else {
            const c = count(r.json);
            ok += c.ok;
            logs += c.logs;
          }
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      requests: latencies.length,
      failed_requests: failed,
      per_second: Math.round(ok / elapsed),
      logs_per_second: Math.round(logs / elapsed),
      latency_ms: { p50: +percentile(latencies, 50).toFixed(1), p99: +percentile(latencies, 99).toFixed(1) },
      cpu_cores: {
        service: +((svc.cpuSeconds() - cpu0) / elapsed).toFixed(2),
        service_by_process: Object.fromEntries(Object.entries(svc.cpuByRole()).map(([k, v]) => [k, +((v - (roles0[k] ?? 0)) / elapsed).toFixed(2)])),
        nats_server: +((natsServerCpu() - nats0) / elapsed).toFixed(2),
      },
    };
  }

  // Warm-up: JIT, the R4 definitions' index in each api process, patient caches.
  for (let i = 0; i < clients * 2; i++) await call(svc.pool, svc.adminKey, "POST", "/v1/fhir", JSON.stringify(bundle()));

  const fhir = await load("/v1/fhir", bundle, (j) => {
    const stored = j.entry.filter((e: any) => e.response.status.startsWith("201")).length;
    return { ok: stored, logs: j.entry.reduce((n: number, e: any) => n + (e.response.status.startsWith("201") ? e.response.outcome.issue.length : 0), 0) };
  });

  // The same logs through the batch route: each resource's derived logs, 100 a batch.
  const logsOf = (): Record<string, unknown>[] => {
    const out: Record<string, unknown>[] = [];
    while (out.length < perBundle) {
      const r = resource();
      const d = deriveLogs(r, { resolve: () => undefined }, `urn:bench:${seq}`);
      if (!d.ok) throw new Error(`bench resource ${r.resourceType} does not map: ${d.message}`);
      const patient = ((r as { subject?: { reference: string }; patient?: { reference: string } }).subject ?? (r as { patient?: { reference: string } }).patient)!.reference.slice(8);
      for (const [k, l] of d.logs.entries()) out.push({ ...l, patient_id: patient, idempotency_key: `${run}-b-${seq}-${k}` });
    }
    return out;
  };
  // Built before the clock starts (mapping costs the load generator what it costs the service).
  const bodies = Array.from({ length: Math.ceil((seconds * 6000) / perBundle) }, () => ({ logs: logsOf() }));
  const batch = await load("/v1/logs/batch", () => bodies.pop() ?? { logs: logsOf() }, (j) => ({ ok: j.accepted, logs: j.accepted }));

  console.log(JSON.stringify({ seconds, clients, bundle_entries: perBundle, patients: patientsTotal, resource_types: [...new Set(Array.from({ length: FHIR_MIX.length }, (_, i) => FHIR_MIX[i]!("x", i).resourceType))], fhir_bundles: fhir, logs_batch_same_logs: batch }, null, 2));
} finally {
  // The service first, so that none of its members works on while its namespace goes.
  await svc.stop();
  const nc = await connect({ servers: process.env.NATS_URL ?? "127.0.0.1:4222" });
  await destroyTopology(nc, svc.namespace);
  await nc.close();
}
