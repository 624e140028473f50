import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { durablesOf } from "../../infra/nats/durable-consumer.js";
import { partitionConsumerTotals } from "../support/partition-consumers.js";
import { StateEngine } from "../../actors/state-engine.js";
import type { PatientStateStore } from "../../infra/redis/state-store.js";

let t: TestStack;
beforeAll(async () => {
  // Reads wait for the service's own engine however long a busy machine makes it (the
  // default bound is 2 s): each case compares the state it reads with a second engine's.
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "20", PSS_READ_WAIT_MS: "30000" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST", url: string, payload?: unknown) => t.app.inject({ method, url, headers: t.auth, payload: payload as object });
const symptom = (pid: string, i: number) => ({
  log_type: "symptom_report",
  patient_id: pid,
  timestamp: new Date(Date.UTC(2026, 5, 1) + i * 60_000).toISOString(),
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: i % 11 }, { name: "tiredness", score: (i * 7) % 11 }] },
});

type EngineOptions = ConstructorParameters<typeof StateEngine>[1];
type Totals = Awaited<ReturnType<typeof partitionConsumerTotals>>;

/**
 * A second engine, on durables of its own, finds the namespace's whole stream waiting (as
 * after an outage) and works through it; `check` sees it and its consumers' totals once
 * at least `delivered` messages came and none is left, then the durables go.
 */
async function drainWithSecondEngine(
  name: string,
  options: Omit<EngineOptions, "durablePrefix">,
  delivered: number,
  check: (engine: StateEngine, info: Totals) => void,
  store: PatientStateStore = t.services.stateStore,
): Promise<void> {
  const { topology, patients } = t.services;
  const { jsm, names } = topology;
  const consumer = `${t.config.namespace}_${name}`;
  const engine = new StateEngine({ js: topology.js, jsm, names, store, patients, log: console }, { ...options, durablePrefix: consumer });
  await engine.start();
  const totals = () => partitionConsumerTotals(jsm, names, (p) => `${consumer}_p${p}_`);
  try {
    let info = await totals();
    for (let i = 0; i < 300 && (info.num_pending > 0 || info.num_ack_pending > 0 || info.delivered < delivered); i++) {
      await new Promise((r) => setTimeout(r, 50));
      info = await totals();
    }
    check(engine, info);
  } finally {
    await engine.stop();
    for (const c of await durablesOf(jsm, names.logsStream, `${consumer}_p`)) await jsm.consumers.delete(names.logsStream, c.name);
  }
}

describe("the state engine working through a backlog", () => {
  it("reads no more than its in-flight budget (plus one pull) at a time, and applies the whole backlog without redeliveries", async () => {
    const pids: string[] = [];
    for (let i = 0; i < 8; i++) pids.push((await inject("POST", "/v1/patients", {})).json().id);
    // 8 patients x 30 batches: 240 messages of 20 logs each.
    for (let b = 0; b < 30; b++) {
      const logs = pids.flatMap((pid) => Array.from({ length: 20 }, (_, k) => symptom(pid, b * 20 + k)));
      const r = (await inject("POST", "/v1/logs/batch", { logs })).json();
      expect(r.accepted, JSON.stringify(r.errors?.slice(0, 2))).toBe(160);
    }
    const expected = await Promise.all(pids.map(async (pid) => (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json()));
    const { jsm, names } = t.services.topology;
    const total = (await jsm.streams.info(names.logsStream)).state.bytes;

    // Its budget is one byte and its pulls about 64 KB, so it holds one pull's worth (a few
    // messages; the first pull assumes 4 KB messages: 16 of them) at most.
    await drainWithSecondEngine("state_backlog", { idleMs: 200, maxInflightBytes: 1, pullBytes: 64 * 1024 }, 240, (engine, info) => {
      expect(info.delivered).toBe(240);
      expect(info.num_pending).toBe(0);
      expect(info.num_ack_pending).toBe(0);
      expect(info.num_redelivered).toBe(0);
      const { peak_bytes } = engine.inflightStats();
      expect(peak_bytes).toBeGreaterThan(0);
      // Each partition's reader may have one pull out when the budget frees: the 8 patients'
      // partitions (at most 8) bound it, not the backlog.
      expect(peak_bytes).toBeLessThanOrEqual(total / 4);
      expect(engine.stats.replays).toBe(0);
    });
    // The state it saved is what the service's own engine had compiled.
    const after = await Promise.all(pids.map(async (pid) => (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json()));
    expect(after).toEqual(expected);
  });

  it("holds no more patient actors than its limit while a backlog of many patients waits, starts each patient about once, and fails none", async () => {
    const pids: string[] = [];
    const created = (await inject("POST", "/v1/patients/batch", { patients: Array.from({ length: 60 }, (_, i) => ({ first_name: `B${i}` })) })).json();
    pids.push(...created.items.map((x: { id: string }) => x.id));
    // One log per patient per batch, three batches: 180 messages, each for a patient no actor holds.
    for (let b = 0; b < 3; b++) {
      const r = (await inject("POST", "/v1/logs/batch", { logs: pids.map((pid) => symptom(pid, b)) })).json();
      expect(r.accepted, JSON.stringify(r.errors?.slice(0, 2))).toBe(60);
    }
    const expected = await Promise.all(pids.map(async (pid) => (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json()));
    await drainWithSecondEngine("state_crowd", { idleMs: 200, maxActive: 4 }, 180, (engine, info) => {
      expect(info.num_pending + info.num_ack_pending).toBe(0);
      // Without the limit every patient of a pull gets an actor at once (each loading from Redis).
      expect(engine.stats.peak_active).toBeLessThanOrEqual(4);
      // A patient waiting for a place gathers its three messages meanwhile and starts once
      // with all of them (one load, one save), rather than once per message while the
      // reader waits at each new patient.
      expect(engine.stats.started).toBeLessThanOrEqual(60 + 15);
      expect(engine.stats.failures).toBe(0);
      expect(engine.stats.replays).toBe(0);
    });
    const after = await Promise.all(pids.map(async (pid) => (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json()));
    expect(after).toEqual(expected);
  });

  it("keeps a message that waits longer than the ack wait from coming again: no redelivery, no replay", async () => {
    const created = (await inject("POST", "/v1/patients/batch", { patients: Array.from({ length: 4 }, (_, i) => ({ first_name: `W${i}` })) })).json();
    const pids: string[] = created.items.map((x: { id: string }) => x.id);
    for (let b = 0; b < 2; b++) {
      const r = (await inject("POST", "/v1/logs/batch", { logs: pids.map((pid) => symptom(pid, b)) })).json();
      expect(r.accepted, JSON.stringify(r.errors?.slice(0, 2))).toBe(4);
    }
    const expected = await Promise.all(pids.map(async (pid) => (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json()));
    // Redis itself, each of these patients' loads held back a second (a slow machine): with
    // one place, the last one's messages wait some 3 s, twice the 1.5 s ack wait. (The
    // stream also holds the earlier tests' patients: they load at once.)
    const real = t.services.stateStore;
    const slow: PatientStateStore = Object.create(real, {
      load: { value: async (patientId: string) => (pids.includes(patientId) && (await new Promise((r) => setTimeout(r, 1_000))), real.load(patientId)) },
    });
    await drainWithSecondEngine(
      "state_held",
      { idleMs: 50, maxActive: 1, ackWaitMs: 1_500 },
      8,
      (engine, info) => {
        expect(info.num_pending + info.num_ack_pending).toBe(0);
        expect(info.num_redelivered).toBe(0);
        expect(engine.stats.replays).toBe(0);
        expect(engine.stats.failures).toBe(0);
      },
      slow,
    );
    const after = await Promise.all(pids.map(async (pid) => (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json()));
    expect(after).toEqual(expected);
  });
});
