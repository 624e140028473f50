import { randomBytes } from "node:crypto";
import { connectNats } from "../../infra/nats/connection.js";
import { durablesOf } from "../../infra/nats/durable-consumer.js";
import { ensureTopology } from "../../infra/nats/topology.js";
import { connectRedis, deleteKeys } from "../../infra/redis/connection.js";
import { PatientStateStore } from "../../infra/redis/state-store.js";
import { StateEngine } from "../../actors/state-engine.js";
import { PatientStore } from "../../src/control/patients.js";
import { JsonKv } from "../../infra/nats/json-kv.js";
import type { PatientState } from "../../readmodels/patient-state.js";
import { PatientLog } from "../../src/logs/patient-log.js";
import type { Group, Member } from "./members.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A connection the member dropped (killed, restarting): the batch goes to another member. */
const RETRYABLE = new Set([503]);

/**
 * Writers sending batches to the members of a group, round robin, every log with an
 * idempotency key of its own. A batch a member did not answer with 200 (it died, or is
 * stopping: a 503) is sent again to the next member with the same keys until one does, so
 * every batch sent is acknowledged once the stream stops. Anything else is recorded in
 * `refused`.
 */
export class LogStream {
  readonly patients: string[] = [];
  /** Keys acknowledged, with their patient. */
  private readonly acked = new Map<string, string>();
  readonly refused: string[] = [];
  retried = 0;
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;
  private seq = 0;
  /** Keys are the project's: two streams on one namespace must not share any. */
  private readonly run = randomBytes(4).toString("hex");

  constructor(
    private readonly g: Group,
    private readonly patientCount: number,
    private readonly writers = 4,
    private readonly batchSize = 20,
    /** Pause between a writer's batches: keeps a long run under the thousand audit rows a rebuilt state keeps per patient. */
    private readonly pauseMs = 0,
  ) {}

  get acknowledged(): number {
    return this.acked.size;
  }

  async createPatients(m: Member): Promise<void> {
    const r = await this.g.call(m, "POST", "/v1/patients/batch", { patients: Array.from({ length: this.patientCount }, (_, i) => ({ first_name: `M${i}` })) });
    if (r.status !== 200 && r.status !== 201) throw new Error(`patients: ${r.status} ${r.text}`);
    this.patients.push(...(r.json as { items: { id: string }[] }).items.map((p) => p.id));
  }

  start(): void {
    this.running = true;
    this.loops = Array.from({ length: this.writers }, () => this.loop());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Resolves once `n` logs are acknowledged. */
  async until(n: number, withinMs = 120_000): Promise<void> {
    const end = Date.now() + withinMs;
    while (this.acked.size < n) {
      if (Date.now() > end) throw new Error(`only ${this.acked.size} of ${n} logs acknowledged; refused: ${this.refused.slice(0, 3).join(" | ")}`);
      await sleep(100);
    }
  }

  /** Acknowledged keys of one patient. */
  keysOf(pid: string): string[] {
    return [...this.acked].filter(([, p]) => p === pid).map(([k]) => k);
  }

  perPatient(): Map<string, number> {
    const out = new Map<string, number>();
    for (const pid of this.acked.values()) out.set(pid, (out.get(pid) ?? 0) + 1);
    return out;
  }

  private batch(): { logs: Record<string, unknown>[]; keys: [string, string][] } {
    const logs: Record<string, unknown>[] = [];
    const keys: [string, string][] = [];
    for (let i = 0; i < this.batchSize; i++) {
      const n = this.seq++;
      const pid = this.patients[Math.floor(Math.random() * this.patients.length)]!;
      const key = `${this.run}-${n}`;
      // Event times wander back and forth, so some logs arrive late and make the engine replay.
      const at = new Date(Date.UTC(2026, 5, 1) + (n + Math.floor(Math.random() * 40) - 20) * 60_000).toISOString();
      logs.push(n % 3 === 0
        ? { log_type: "symptom_report", patient_id: pid, timestamp: at, idempotency_key: key, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: n % 11 }] } }
        : { log_type: "user_login", patient_id: pid, timestamp: at, idempotency_key: key, payload: {} });
      keys.push([key, pid]);
    }
    return { logs, keys };
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const b = this.batch();
      for (let attempt = 0; ; attempt++) {
        const live = this.g.members.filter((m) => m.process);
        const m = live[this.next++ % live.length]!;
        const r = await this.g.call(m, "POST", "/v1/logs/batch", { logs: b.logs }).catch(() => null);
        if (r?.status === 200 && (r.json as { accepted: number; duplicates?: number; errors?: unknown[] }).errors?.length === 0) {
          for (const [k, pid] of b.keys) this.acked.set(k, pid);
          if (this.pauseMs > 0) await sleep(this.pauseMs);
          break;
        }
        if (r && !RETRYABLE.has(r.status) && r.status !== 200) this.refused.push(`${m.name} ${r.status} ${r.text.slice(0, 200)}`);
        if (r?.status === 200) this.refused.push(`${m.name} 200 with errors ${r.text.slice(0, 200)}`);
        this.retried++;
        if (attempt > 200) throw new Error("a batch was never acknowledged");
        await sleep(100);
      }
    }
  }

  /** Audit rows of the patient's state (one per applied log), and how many distinct logs they name. */
  appliedEvents(m: Member, pid: string): Promise<{ rows: number; logs: number }> {
    return appliedEvents(this.g, m, pid);
  }

  /** The patient's stable and event modules as the member answers them, as text. */
  async stateText(m: Member, pid: string): Promise<string> {
    const parts: string[] = [];
    for (const path of ["stable", "event-modules"]) {
      const r = await this.g.call(m, "GET", `/v1/state/${pid}/${path}`);
      if (r.status !== 200) throw new Error(`state of ${pid}: ${r.status} ${r.text}`);
      parts.push(r.text);
    }
    return parts.join("\n");
  }

  async queryCount(m: Member): Promise<number> {
    for (let i = 0; ; i++) {
      const r = await this.g.call(m, "POST", "/v1/state/logs/query", { count: true });
      if (r.status === 200) return (r.json as { count: number }).count;
      if (i > 50) throw new Error(`log query: ${r.status} ${r.text}`);
      await sleep(200);
    }
  }
}

/** Audit rows of the patient's state as `m` answers it (one per applied log), and how many distinct logs they name; a stale answer is read again. */
export async function appliedEvents(g: Group, m: Member, pid: string): Promise<{ rows: number; logs: number }> {
  const ids = new Set<string>();
  let rows = 0;
  for (let cursor: string | null = null, tries = 0; ; ) {
    const r = await g.call(m, "GET", `/v1/state/${pid}/events?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    // Stale: the engine had not caught up within the read's wait (a backlog after restarts).
    if (r.status !== 200 || r.stale) {
      if (++tries > 60) throw new Error(`events of ${pid}: ${r.status} ${r.stale ? "stale" : r.text}`);
      await sleep(500);
      ids.clear();
      rows = 0;
      cursor = null;
      continue;
    }
    const page = r.json as { events: { source_event_log_id: string }[]; next_cursor: string | null };
    rows += page.events.length;
    for (const e of page.events) ids.add(e.source_event_log_id);
    cursor = page.next_cursor;
    if (!cursor) return { rows, logs: ids.size };
  }
}

/**
 * Each patient's state as one engine alone compiles it from the namespace's stream: a fresh
 * engine in this process, on durables and Redis keys of its own, folds every partition.
 */
export async function foldAlone(ns: string, patients: readonly string[]): Promise<Map<string, { alone: PatientState; members: PatientState | undefined }>> {
  const nc = await connectNats("nats://127.0.0.1:4222");
  const redis = await connectRedis("redis://127.0.0.1:6379");
  const prefix = `${ns}:alone`;
  try {
    const topology = await ensureTopology(nc, ns);
    const store = new PatientStateStore(redis, prefix);
    const patientStore = new PatientStore(new JsonKv(topology.kv.patients), new JsonKv(topology.kv.externalIds));
    const shared = new PatientStateStore(redis, ns);
    const engine = new StateEngine({ js: topology.js, jsm: topology.jsm, names: topology.names, store, patients: patientStore, log: console }, { durablePrefix: `${ns}_alone`, idleMs: 500 });
    await engine.start();
    const last = (await topology.jsm.streams.info(topology.names.logsStream)).state.last_seq;
    const out = new Map<string, { alone: PatientState; members: PatientState | undefined }>();
    const end = Date.now() + 60_000;
    for (const pid of patients) {
      for (;;) {
        const s = await store.load(pid);
        const subject = topology.names.logSubject("org_default", "prj_default", pid);
        const lastOfPatient = (await topology.jsm.streams.getMessage(topology.names.logsStream, { last_by_subj: subject }).catch(() => null))?.seq ?? 0;
        if (s && s.applied_seq >= Math.min(lastOfPatient, last)) {
          out.set(pid, { alone: s.state, members: (await shared.load(pid))?.state });
          break;
        }
        if (Date.now() > end) throw new Error(`the lone engine did not apply ${pid}`);
        await sleep(100);
      }
    }
    await engine.stop();
    for (const c of await durablesOf(topology.jsm, topology.names.logsStream, `${ns}_alone_p`)) await topology.jsm.consumers.delete(topology.names.logsStream, c.name);
    return out;
  } finally {
    await deleteKeys(redis, `${prefix}:*`);
    await redis.quit();
    await nc.close();
  }
}

/** The idempotency keys of the logs the stream holds for each patient (a diagnosis of a mismatch). */
export async function storedKeys(ns: string, patients: readonly string[]): Promise<Map<string, string[]>> {
  const nc = await connectNats("nats://127.0.0.1:4222");
  try {
    const topology = await ensureTopology(nc, ns);
    const out = new Map<string, string[]>();
    for (const pid of patients) {
      const keys: string[] = [];
      for await (const m of new PatientLog(topology).read({ organization_id: "org_default", project_id: "prj_default", patient_id: pid })) {
        for (const l of m.data.logs) keys.push(String(l.idempotency_key));
      }
      out.set(pid, keys);
    }
    return out;
  } finally {
    await nc.close();
  }
}
