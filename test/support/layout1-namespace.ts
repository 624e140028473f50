import { randomBytes } from "node:crypto";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { connectNats } from "../../infra/nats/connection.js";
import { JsonKv } from "../../infra/nats/json-kv.js";
import { LOG_LAYOUT_KEY } from "../../infra/nats/log-layout.js";
import { ensureTopology, type Topology } from "../../infra/nats/topology.js";
import { loadConfig } from "../../src/config.js";
import { BOOTSTRAP } from "../../src/control/bootstrap.js";
import { PatientStore, type Patient } from "../../src/control/patients.js";
import { newId } from "../../src/ids.js";
import { validateEnvelope } from "../../src/logs/envelope.js";
import { toRecord } from "../../src/logs/log-writer.js";
import type { LogRecord } from "../../readmodels/log-record.js";

/** A namespace as the first log layout left it, and what was written into it. */
export interface Layout1Namespace {
  ns: string;
  patients: Patient[];
  /** Each patient's logs as a client sent them (for POST /v1/logs/batch), in stream order. */
  inputs: Map<string, Record<string, unknown>[]>;
  /** Each patient's stored logs, in stream order. */
  stored: Map<string, LogRecord[]>;
  /** How many logs and messages the log stream holds. */
  logs: number;
  messages: number;
}

const { organization_id: ORG, project_id: PROJECT } = BOOTSTRAP;

function patientRecord(id: string, now: string): Patient {
  return {
    id, organization_id: ORG, project_id: PROJECT, first_name: `L1-${id.slice(-4)}`, last_name: null, email: null, phone_number: null, date_of_birth: null, sex: null,
    timezone: "UTC", status: "active", external_identifiers: [], metadata: {}, created_at: now, updated_at: now,
  };
}

/** The i-th log a client sends for a patient: a mix of the types whose modules the state compiles. */
function logInput(patientId: string, i: number): Record<string, unknown> {
  const timestamp = new Date(Date.UTC(2026, 6, 1) + i * 3_600_000).toISOString();
  const kinds = [
    { log_type: "symptom_report", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: i % 11 }] } },
    { log_type: "lab_results", payload: { results: [{ loinc_code: "2345-7", test_name: "Glucose", value_numeric: 90 + (i % 50), unit: "mg/dL" }] } },
    { log_type: "medication_list_update", payload: { medications: [{ action: "add", medication_name: `Drug${i % 5}`, dose: "500 mg", frequency: "BID" }] } },
    { log_type: "user_login", payload: {} },
  ];
  const input: Record<string, unknown> = { patient_id: patientId, timestamp, ...kinds[i % kinds.length]! };
  if (i % 7 === 0) input.idempotency_key = `l1-${patientId}-${i}`;
  return input;
}

/** The stored form of `input`, as the write path makes it. */
function storedOf(input: Record<string, unknown>, ingestedAt: string): LogRecord {
  const r = validateEnvelope(input, ["logs", 0], ingestedAt);
  if (!r.ok) throw new Error(`layout-1 fixture log is invalid: ${r.message}`);
  return toRecord(r.log, { organization_id: ORG, project_id: PROJECT }, ingestedAt, r.log.idempotency_key);
}

/** The durables the first layout's engine and projector had (whole stream, from the start). */
async function addLegacyDurables(t: Topology): Promise<void> {
  const { jsm, names } = t;
  await jsm.consumers.add(names.logsStream, { durable_name: names.legacyStateConsumer, ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, ack_wait: 60_000_000_000, max_ack_pending: 20_000 });
  await jsm.consumers.add(names.logsStream, { durable_name: `${names.namespace}_clickhouse`, ack_policy: AckPolicy.All, deliver_policy: DeliverPolicy.All, max_ack_pending: 200_000 });
}

/** Publishes each patient's logs in messages of 1 to 4 logs, patients interleaved, on the first layout's subjects. */
async function publishLegacy(t: Topology, patients: Patient[], logsPerPatient: number, out: Layout1Namespace): Promise<void> {
  const { js, names } = t;
  const next = new Map(patients.map((p) => [p.id, 0]));
  for (let round = 0; [...next.values()].some((n) => n < logsPerPatient); round++) {
    for (const p of patients) {
      const from = next.get(p.id)!;
      const size = Math.min(1 + ((round + from) % 4), logsPerPatient - from);
      if (size <= 0) continue;
      const ingestedAt = new Date().toISOString();
      const inputs = Array.from({ length: size }, (_, k) => logInput(p.id, from + k));
      const logs = inputs.map((input) => storedOf(input, ingestedAt));
      await js.publish(`${names.namespace}.log.${ORG}.${PROJECT}.${p.id}`, JSON.stringify({ logs }));
      out.inputs.get(p.id)!.push(...inputs);
      out.stored.get(p.id)!.push(...logs);
      out.logs += size;
      out.messages++;
      next.set(p.id, from + size);
    }
  }
}

/**
 * Builds a namespace as the first log layout left it: streams and buckets, patients of the
 * bootstrap project, logs on `{ns}.log.{org}.{project}.{patient}`, the legacy durables, and
 * no `log_layout` record. Drop it with the stack that migrates it, or dropNamespace.
 */
export async function buildLayout1Namespace(opts: { patients: number; logsPerPatient: number; ns?: string }): Promise<Layout1Namespace> {
  const ns = opts.ns ?? `t${randomBytes(5).toString("hex")}`;
  const nc: NatsConnection = await connectNats(loadConfig({ PSS_NAMESPACE: ns }));
  try {
    const t = await ensureTopology(nc, ns);
    // What ensureTopology records for a new namespace, the first layout never had.
    await t.kv.config.delete(LOG_LAYOUT_KEY);
    const now = new Date().toISOString();
    const patients = Array.from({ length: opts.patients }, () => patientRecord(newId("pat"), now));
    const store = new PatientStore(new JsonKv(t.kv.patients), new JsonKv(t.kv.externalIds));
    for (const p of patients) await store.create(p);
    const out: Layout1Namespace = { ns, patients, inputs: new Map(patients.map((p) => [p.id, []])), stored: new Map(patients.map((p) => [p.id, []])), logs: 0, messages: 0 };
    await publishLegacy(t, patients, opts.logsPerPatient, out);
    await addLegacyDurables(t);
    return out;
  } finally {
    await nc.drain();
  }
}
