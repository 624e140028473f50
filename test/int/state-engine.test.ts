import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";
import { partitionConsumerTotals } from "../support/partition-consumers.js";
import { partitionOf } from "../../infra/nats/partitions.js";
import { StateEngine } from "../../actors/state-engine.js";
import { replayPatient } from "../../readmodels/patient-state.js";
import type { PatientLogMessage } from "../../src/logs/log-writer.js";
import { readSubject } from "../../infra/nats/log-history.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import { MODEL_FINGERPRINT, PatientStateStore } from "../../infra/redis/state-store.js";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";

let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_ACTOR_IDLE_MS: "300", PSS_VIEW_DEBOUNCE_MS: "20" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST", url: string, payload?: unknown) => t.app.inject({ method, url, headers: t.auth, payload: payload as object });
const newPatient = async (tz = "UTC") => (await inject("POST", "/v1/patients", { timezone: tz })).json().id as string;
const send = async (logs: unknown[]) => {
  const r = (await inject("POST", "/v1/logs/batch", { logs })).json();
  expect(r.failed, JSON.stringify(r.errors)).toBe(0);
  return r;
};
const demographics = (pid: string, ts: string, payload: Record<string, unknown>) => ({ log_type: "demographics", patient_id: pid, timestamp: ts, payload });
const symptom = (pid: string, ts: string, score: number) => ({
  log_type: "symptom_report",
  patient_id: pid,
  timestamp: ts,
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] },
});

async function history(pid: string): Promise<LogRecord[]> {
  const { js, jsm, names } = t.services.topology;
  const out: LogRecord[] = [];
  for await (const m of readSubject<PatientLogMessage>(js, jsm, names.logsStream, names.logSubject("org_default", "prj_default", pid))) out.push(...m.data.logs);
  return out;
}

async function stateJson(pid: string) {
  const r = await inject("GET", `/v1/state/${pid}/stable`);
  const e = await inject("GET", `/v1/state/${pid}/event-modules/symptoms`);
  return { stable: r.json(), symptoms: e.json() };
}

describe("the state engine", () => {
  it("shows a batch's logs to a state read right after the batch's answer", async () => {
    const pid = await newPatient();
    await send([demographics(pid, "2026-01-01T00:00:00Z", { name: "Ada", sex: "female" })]);
    const r = await inject("GET", `/v1/state/${pid}/stable?modules=demographics`);
    expect(r.statusCode).toBe(200);
    expect(r.json().modules.demographics.payload).toMatchObject({ name: "Ada", sex: "female" });
    expect(r.headers["x-pss-stale"]).toBeUndefined();
  });

  it("acknowledges every message it applied (nothing left for JetStream to deliver again)", async () => {
    const pid = await newPatient();
    await send([symptom(pid, "2026-01-02T00:00:00Z", 3)]);
    await send([symptom(pid, "2026-01-03T00:00:00Z", 4)]);
    await stateJson(pid);
    const { jsm, names } = t.services.topology;
    let info = await partitionConsumerTotals(jsm, names);
    for (let i = 0; i < 50 && (info.num_ack_pending > 0 || info.num_pending > 0); i++) {
      await new Promise((r) => setTimeout(r, 20));
      info = await partitionConsumerTotals(jsm, names);
    }
    expect(info.num_ack_pending).toBe(0);
    expect(info.num_pending).toBe(0);
    expect(info.num_redelivered).toBe(0);
  });

  it("places a late log where its timestamp puts it, by replaying the patient", async () => {
    const pid = await newPatient();
    await send([demographics(pid, "2026-02-02T00:00:00Z", { name: "Newer" }), symptom(pid, "2026-02-02T00:00:00Z", 6)]);
    await send([demographics(pid, "2026-02-01T00:00:00Z", { name: "Older", marital_status: "single" }), symptom(pid, "2026-02-01T00:00:00Z", 2)]);
    const s = await stateJson(pid);
    expect(s.stable.modules.demographics.payload).toMatchObject({ name: "Newer", marital_status: "single" });
    const pain = s.symptoms.payload.symptoms[0];
    expect(pain.current_score).toBe(6);
    expect(pain.history.map((h: any) => h.score)).toEqual([2, 6]);
    // Same as folding the stored logs from scratch in fold order.
    const expected = replayPatient(pid, "UTC", await history(pid));
    expect(s.stable.modules.demographics.payload).toEqual(expected.stable.demographics!.payload);
    expect(t.services.engine!.stats.replays).toBeGreaterThan(0);
  });

  it("does not apply a log twice when messages come again after a crash between apply and ack", async () => {
    const pid = await newPatient();
    await send([symptom(pid, "2026-03-01T00:00:00Z", 3)]);
    await send([symptom(pid, "2026-03-02T00:00:00Z", 4)]);
    const before = await stateJson(pid);
    const events = (await inject("GET", `/v1/state/${pid}/events?limit=100`)).json();
    expect(events.count).toBe(2);
    // A second engine on a fresh consumer gets every message again, as after a crash
    // that stored the state but lost the acks.
    const again = new StateEngine(
      { js: t.services.topology.js, jsm: t.services.topology.jsm, names: t.services.topology.names, store: t.services.stateStore, patients: t.services.patients, log: console },
      { durablePrefix: `${t.config.namespace}_state_again`, idleMs: 200 },
    );
    await again.start();
    const deadline = Date.now() + 5_000;
    while (again.stats.delivered < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    await again.stop();
    expect(again.stats.delivered).toBeGreaterThanOrEqual(2);
    expect(await stateJson(pid)).toEqual(before);
    expect((await inject("GET", `/v1/state/${pid}/events?limit=100`)).json().count).toBe(2);
  });

  it("applies the messages a killed engine took and never acknowledged, before newer ones of the same patient", async () => {
    const { js, jsm, names } = t.services.topology;
    const durable = `${t.config.namespace}_killed`;
    // Its own state keys, so the stack's engine (which applies everything too) cannot hide a loss.
    const store = new PatientStateStore(t.services.redis, `${t.config.namespace}:killed`);
    const pid = await newPatient();
    const last = (await jsm.streams.info(names.logsStream)).state.last_seq;
    const partition = partitionOf(pid, names.partitions);
    await jsm.consumers.add(names.logsStream, { durable_name: `${durable}_p${partition}_0`, filter_subject: names.logSubjectsOfPartition(partition), ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: last + 1, ack_wait: 60_000_000_000, max_ack_pending: 20_000, max_deliver: -1 });
    const engine = () => new StateEngine({ js, jsm, names, store, patients: t.services.patients, log: console }, { durablePrefix: durable, idleMs: 200 });
    const history = async (n: number) => {
      let pain: any;
      for (const until = Date.now() + 5_000; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
        pain = (await store.load(pid))?.state.event.symptoms?.payload.symptoms[0];
        if (pain?.history.length === n) break;
      }
      return pain?.history.map((h: any) => h.score);
    };
    // A patient the engine already holds state for (a new one is compiled from its whole history anyway).
    await send([symptom(pid, "2026-03-31T00:00:00Z", 1)]);
    const first = engine();
    await first.addPartition(partition);
    expect(await history(1)).toEqual([1]);
    await first.stop();
    await send([symptom(pid, "2026-04-01T00:00:00Z", 3)]);
    // The engine that took the next message dies before acknowledging it.
    const taken = await (await js.consumers.get(names.logsStream, `${durable}_p${partition}_0`)).fetch({ max_messages: 1, expires: 2_000 });
    let took = 0;
    for await (const _ of taken) took++;
    expect(took).toBe(1);
    await send([symptom(pid, "2026-04-02T00:00:00Z", 5)]);
    const next = engine();
    try {
      await next.addPartition(partition);
      expect(await history(3)).toEqual([1, 3, 5]);
    } finally {
      await next.stop();
      await jsm.consumers.delete(names.logsStream, `${durable}_p${partition}_0`).catch(() => undefined);
      await store.erase("prj_default", pid);
    }
  });

  it("rebuilds a patient's audit that Redis lost on its own (an eviction) when the next log comes", async () => {
    const pid = await newPatient();
    await send([symptom(pid, "2026-05-01T00:00:00Z", 2)]);
    await send([symptom(pid, "2026-05-02T00:00:00Z", 3)]);
    expect((await inject("GET", `/v1/state/${pid}/events?limit=100`)).json().count).toBe(2);
    await t.services.redis.del(t.services.stateStore.keys(pid).events);
    await send([symptom(pid, "2026-05-03T00:00:00Z", 4)]);
    const events = (await inject("GET", `/v1/state/${pid}/events?limit=100`)).json();
    expect(events.events.map((e: any) => e.log_type)).toEqual(["symptom_report", "symptom_report", "symptom_report"]);
  });

  it("rebuilds a patient's state from JetStream after Redis lost it, equal to what incremental application gave", async () => {
    const pid = await newPatient("Europe/Paris");
    await send([symptom(pid, "2026-04-01T08:00:00Z", 5), demographics(pid, "2026-04-01T08:00:00Z", { name: "Grace" })]);
    await send([symptom(pid, "2026-04-02T08:00:00Z", 0), { log_type: "heart_rate_data", patient_id: pid, timestamp: "2026-04-02T22:30:00Z", payload: { resting_bpm: 58, period: { start_datetime: "2026-04-02T22:00:00Z", end_datetime: "2026-04-02T23:00:00Z" } } }]);
    const incremental = await stateJson(pid);
    const heart = (await inject("GET", `/v1/state/${pid}/event-modules/heart`)).json();
    const k = t.services.stateStore.keys(pid);
    await t.services.redis.del([k.state, k.events, k.views]);
    await t.services.redis.del(`${t.config.namespace}:acc:{prj_default}`);
    const t0 = Date.now();
    expect(await stateJson(pid)).toEqual(incremental);
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect((await inject("GET", `/v1/state/${pid}/event-modules/heart`)).json()).toEqual(heart);
  });

  it("rebuilds from JetStream a state that Redis holds in another layout (saved by another build)", async () => {
    const pid = await newPatient();
    await send([symptom(pid, "2026-07-01T08:00:00Z", 6), demographics(pid, "2026-07-01T08:00:00Z", { name: "Lin" })]);
    const incremental = await stateJson(pid);
    const k = t.services.stateStore.keys(pid);
    // A layout without per-module sequences, under a fingerprint of no layout version.
    const { module_seq: _, ...meta } = JSON.parse((await t.services.redis.hGet(k.state, "meta"))!) as Record<string, unknown>;
    await t.services.redis.hSet(k.state, "meta", JSON.stringify({ ...meta, fingerprint: MODEL_FINGERPRINT.replace(/^layout:\d+,/, "") }));
    const replays = t.services.engine!.stats.replays;
    expect(await stateJson(pid)).toEqual(incremental);
    expect(t.services.engine!.stats.replays).toBeGreaterThan(replays);
    expect((await t.services.stateStore.load(pid))?.fingerprint).toBe(MODEL_FINGERPRINT);
  });

  it("rebuilds a patient whose state Redis lost while its actor was in memory, when the next log comes before any read", async () => {
    const pid = await newPatient();
    await send([demographics(pid, "2026-06-01T08:00:00Z", { name: "Ada" }), symptom(pid, "2026-06-01T08:00:00Z", 4)]);
    await stateJson(pid);
    const k = t.services.stateStore.keys(pid);
    await t.services.redis.del([k.state, k.events, k.views]);
    // Only the symptoms module changes: a save of the changed modules alone would leave
    // Redis with a state that has lost the patient's profile.
    await send([symptom(pid, "2026-06-02T08:00:00Z", 2)]);
    const after = await stateJson(pid);
    expect(after.stable.modules.demographics?.payload).toMatchObject({ name: "Ada" });
    expect(after.symptoms.payload.symptoms[0].history.map((h: { score: number }) => h.score)).toEqual([4, 2]);
    const expected = replayPatient(pid, "UTC", await history(pid));
    expect(after.stable.modules.demographics.payload).toEqual(expected.stable.demographics!.payload);
    expect(after.symptoms.payload).toEqual(expected.event.symptoms!.payload);
  });

  it("takes what the write path stored as objects, unparsed, and compiles what the parsed history gives", async () => {
    const pid = await newPatient();
    const published = t.services.published!;
    const before = published.stats.handed;
    for (let day = 1; day <= 6; day++) {
      await send([
        symptom(pid, `2026-06-0${day}T08:00:00Z`, day),
        { log_type: "heart_rate_data", patient_id: pid, timestamp: `2026-06-0${day}T22:30:00Z`, payload: { resting_bpm: 50 + day, period: { start_datetime: `2026-06-0${day}T22:00:00Z`, end_datetime: `2026-06-0${day}T23:00:00Z` } } },
      ]);
    }
    await send([demographics(pid, "2026-06-07T00:00:00Z", { name: "Lin", sex: "female" })]);
    const s = await stateJson(pid);
    // Seven messages, each read by the engine and the projector. One read may beat the
    // publish's acknowledgement and parse instead; most are handed over (and frozen under
    // tests, so a reducer that wrote into a log would have failed here).
    expect(published.stats.handed - before).toBeGreaterThanOrEqual(7);
    const expected = replayPatient(pid, "UTC", await history(pid));
    expect(s.stable.modules.demographics.payload).toEqual(expected.stable.demographics!.payload);
    expect(s.symptoms.payload).toEqual(expected.event.symptoms!.payload);
    expect((await inject("GET", `/v1/state/${pid}/event-modules/heart`)).json().payload).toEqual(expected.event.heart!.payload);
  });

  it("passivates idle patients and picks up where it left when their next log comes", async () => {
    const pid = await newPatient();
    await send([symptom(pid, "2026-05-01T00:00:00Z", 7)]);
    await inject("GET", `/v1/state/${pid}/stable`);
    const engine = t.services.engine!;
    const deadline = Date.now() + 5_000;
    while (engine.activeCount() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(engine.activeCount()).toBe(0);
    expect(engine.stats.passivated).toBeGreaterThan(0);
    await send([symptom(pid, "2026-05-02T00:00:00Z", 1)]);
    const s = (await inject("GET", `/v1/state/${pid}/event-modules/symptoms`)).json();
    expect(s.payload.symptoms[0].history.map((h: any) => h.score)).toEqual([7, 1]);
  });
});

describe("views", () => {
  it("are rendered in the background once the engine has caught up, and a read renders and keeps what is stale", async () => {
    const pid = await newPatient();
    await send([symptom(pid, "2026-06-01T00:00:00Z", 5)]);
    const k = t.services.stateStore.keys(pid);
    const deadline = Date.now() + 5_000;
    while (!(await t.services.redis.hExists(k.views, "symptom_snapshot")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const stored = JSON.parse((await t.services.redis.hGet(k.views, "symptom_snapshot"))!);
    expect(stored.view.blocks.length).toBeGreaterThan(0);
    // A read of a view nobody rendered yet stores it for the next read.
    await t.services.redis.hDel(k.views, "symptom_snapshot");
    const read = (await inject("GET", `/v1/state/${pid}/views/symptom_snapshot`)).json();
    expect(read.view_id).toBe(stored.view.view_id);
    let kept: string | undefined;
    for (let i = 0; i < 50 && !kept; i++) {
      kept = (await t.services.redis.hGet(k.views, "symptom_snapshot")) ?? undefined;
      if (!kept) await new Promise((r) => setTimeout(r, 10));
    }
    expect(JSON.parse(kept!).view.view_id).toBe(read.view_id);
  });
});
