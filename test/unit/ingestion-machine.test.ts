import { describe, expect, it } from "vitest";
import { createActor, fromPromise, waitFor, type SnapshotFrom } from "xstate";
import { jobMachine, type JobMachineInput, type StageInput } from "../../actors/ingestion/job-machine.js";

const input: JobMachineInput = {
  job_id: "job_1",
  organization_id: "org_1",
  project_id: "prj_1",
  require_confirmation: true,
  rollback_on_cancel: false,
  summary_types: null,
  skip_backfill: false,
  confirm_timeout_ms: 60_000,
};

/** A promise the test settles by hand, with what the stage was called with. */
function gate<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type Calls = Record<string, { input: unknown; signal: AbortSignal }[]>;

/** The machine with every stage faked: each resolves at once unless `overrides` says otherwise. */
function fakes(overrides: Partial<Record<string, (input: never, signal: AbortSignal) => Promise<unknown>>> = {}) {
  const calls: Calls = {};
  const stage = <O>(name: string, fallback: () => O) =>
    fromPromise<O, never>(async ({ input: i, signal }) => {
      (calls[name] ??= []).push({ input: i, signal });
      const o = overrides[name];
      return (o ? await o(i, signal) : fallback()) as O;
    });
  const machine = jobMachine.provide({
    actors: {
      validate: stage("validate", () => ({ structural_errors: 0 })),
      insertPatients: stage("insertPatients", () => undefined),
      stageLogs: stage("stageLogs", () => undefined),
      confirmTimer: stage("confirmTimer", () => new Promise<void>(() => undefined)),
      replay: stage("replay", () => undefined),
      backfill: stage("backfill", () => undefined),
      cleanup: stage("cleanup", () => undefined),
    } as never,
  });
  return { machine, calls };
}

const start = (machine: ReturnType<typeof fakes>["machine"], i: Partial<JobMachineInput> = {}) => createActor(machine, { input: { ...input, ...i } }).start();
const at = (name: string) => (s: { value: unknown }) => s.value === name;

describe("the ingestion job machine", () => {
  it("waits in QUEUED until the runner starts it", async () => {
    const { machine, calls } = fakes();
    const a = start(machine);
    expect(a.getSnapshot().value).toBe("QUEUED");
    expect(calls.validate).toBeUndefined();
    a.send({ type: "START" });
    await waitFor(a, at("AWAITING_CONFIRMATION"));
    expect(calls.validate![0]!.input).toEqual({ job_id: "job_1", organization_id: "org_1", project_id: "prj_1" });
  });

  it("goes VALIDATING → INSERTING_PATIENTS → INSERTING_LOGS → AWAITING_CONFIRMATION with a deadline", async () => {
    const seen: unknown[] = [];
    const { machine } = fakes();
    const a = start(machine);
    a.subscribe((s) => seen.push(s.value));
    const before = Date.now();
    a.send({ type: "START" });
    const s = await waitFor(a, at("AWAITING_CONFIRMATION"));
    expect(seen).toEqual(["VALIDATING", "INSERTING_PATIENTS", "INSERTING_LOGS", "AWAITING_CONFIRMATION"]);
    expect(s.context.confirm_deadline).toBeGreaterThanOrEqual(before + 60_000);
    expect(s.context.confirm_deadline).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it("fails a file with structural errors, cleaning up with the job's rollback option", async () => {
    const { machine, calls } = fakes({ validate: async () => ({ structural_errors: 3 }) });
    const a = start(machine, { rollback_on_cancel: true });
    a.send({ type: "START" });
    const s = await waitFor(a, at("FAILED"));
    expect(s.context.message).toMatch(/3 invalid line/);
    expect(calls.cleanup![0]!.input).toMatchObject({ rollback: true });
    expect(calls.insertPatients).toBeUndefined();
  });

  it.each(["validate", "insertPatients", "stageLogs"])("fails when %s throws, saying why", async (name) => {
    const { machine } = fakes({ [name]: async () => Promise.reject(new Error("NATS went away")) });
    const a = start(machine);
    a.send({ type: "START" });
    expect((await waitFor(a, at("FAILED"))).context.message).toMatch(/NATS went away/);
  });

  it("runs straight through to COMPLETED when no confirmation is required", async () => {
    const { machine, calls } = fakes();
    const a = start(machine, { require_confirmation: false, summary_types: ["symptom_snapshot"] });
    a.send({ type: "START" });
    const s = await waitFor(a, at("COMPLETED"));
    expect(s.status).toBe("done");
    expect(s.context.backfill_ok).toBe(true);
    expect(calls.confirmTimer).toBeUndefined();
    expect(calls.backfill![0]!.input).toMatchObject({ summary_types: ["symptom_snapshot"] });
  });

  it("replays on CONFIRM, with the view types named at confirmation", async () => {
    const { machine, calls } = fakes();
    const a = start(machine, { summary_types: ["labs_snapshot"] });
    a.send({ type: "START" });
    await waitFor(a, at("AWAITING_CONFIRMATION"));
    a.send({ type: "CONFIRM", summary_types: ["symptom_snapshot"] });
    const s = await waitFor(a, at("COMPLETED"));
    expect(s.context.summary_types).toEqual(["symptom_snapshot"]);
    expect(calls.replay).toHaveLength(1);
    expect(calls.confirmTimer![0]!.signal.aborted).toBe(true);
  });

  it("takes the review's changes while awaiting confirmation and completes after the replay without a backfill when told to skip it", async () => {
    const { machine, calls } = fakes();
    const a = start(machine, { summary_types: ["labs_snapshot"] });
    a.send({ type: "START" });
    await waitFor(a, at("AWAITING_CONFIRMATION"));
    a.send({ type: "REVISE", summary_types: ["symptom_snapshot"] });
    a.send({ type: "REVISE", skip_backfill: true });
    expect(a.getSnapshot().value).toBe("AWAITING_CONFIRMATION");
    expect(a.getSnapshot().context).toMatchObject({ summary_types: ["symptom_snapshot"], skip_backfill: true });
    a.send({ type: "CONFIRM" });
    const s = await waitFor(a, at("COMPLETED"));
    expect(calls.replay).toHaveLength(1);
    expect(calls.backfill).toBeUndefined();
    expect(s.context.backfill_ok).toBeNull();
  });

  it("ignores REVISE once the job has left the review", async () => {
    const { machine, calls } = fakes();
    const a = start(machine, { require_confirmation: false });
    a.send({ type: "REVISE", skip_backfill: true });
    a.send({ type: "START" });
    await waitFor(a, at("COMPLETED"));
    expect(calls.backfill).toHaveLength(1);
  });

  it("backfills a job restored from a snapshot saved before skip_backfill existed", async () => {
    const { machine, calls } = fakes();
    const a = start(machine, { skip_backfill: undefined as unknown as boolean });
    a.send({ type: "START" });
    await waitFor(a, at("AWAITING_CONFIRMATION"));
    a.send({ type: "CONFIRM" });
    await waitFor(a, at("COMPLETED"));
    expect(calls.backfill).toHaveLength(1);
  });

  it("completes with backfill_ok false when the view backfill fails", async () => {
    const { machine } = fakes({ backfill: async () => Promise.reject(new Error("redis")) });
    const a = start(machine, { require_confirmation: false });
    a.send({ type: "START" });
    expect((await waitFor(a, at("COMPLETED"))).context.backfill_ok).toBe(false);
  });

  it("keeps created patients when replay fails, since logs may already be in patient state", async () => {
    const { machine, calls } = fakes({ replay: async () => Promise.reject(new Error("disk full")) });
    const a = start(machine, { require_confirmation: false, rollback_on_cancel: true });
    a.send({ type: "START" });
    const s = await waitFor(a, at("FAILED"));
    expect(s.context.message).toMatch(/replay failed: disk full/);
    expect(calls.cleanup![0]!.input).toMatchObject({ rollback: false });
  });

  it("cancels from AWAITING_CONFIRMATION, rolling back as configured", async () => {
    const { machine, calls } = fakes();
    const a = start(machine, { rollback_on_cancel: true });
    a.send({ type: "START" });
    await waitFor(a, at("AWAITING_CONFIRMATION"));
    a.send({ type: "CANCEL" });
    const s = await waitFor(a, at("CANCELLED"));
    expect(s.context.message).toBe("cancelled on request");
    expect(calls.cleanup![0]!.input).toMatchObject({ rollback: true });
    expect(calls.replay).toBeUndefined();
  });

  it("lets a CANCEL's own rollback choice decide over the job's, either way, and keeps it in the context", async () => {
    for (const [configured, chosen] of [[false, true], [true, false]] as const) {
      const { machine, calls } = fakes();
      const a = start(machine, { rollback_on_cancel: configured });
      a.send({ type: "START" });
      await waitFor(a, at("AWAITING_CONFIRMATION"));
      a.send({ type: "CANCEL", rollback: chosen });
      const s = await waitFor(a, at("CANCELLED"));
      expect(calls.cleanup![0]!.input).toMatchObject({ rollback: chosen });
      expect(s.context.rollback_on_cancel).toBe(chosen);
    }
  });

  it("cancels automatically when the confirmation timer fires", async () => {
    const timer = gate();
    const { machine } = fakes({ confirmTimer: () => timer.promise });
    const a = start(machine, { confirm_timeout_ms: 7 * 24 * 3600 * 1000 });
    a.send({ type: "START" });
    await waitFor(a, at("AWAITING_CONFIRMATION"));
    timer.resolve();
    expect((await waitFor(a, at("CANCELLED"))).context.message).toMatch(/not confirmed within 604800 s/);
  });

  it("stops the running stage on CANCEL: its signal is aborted", async () => {
    const { machine, calls } = fakes({ insertPatients: () => new Promise(() => undefined) });
    const a = start(machine);
    a.send({ type: "START" });
    await waitFor(a, at("INSERTING_PATIENTS"));
    a.send({ type: "CANCEL", reason: "changed my mind" });
    const s = await waitFor(a, at("CANCELLED"));
    expect(calls.insertPatients![0]!.signal.aborted).toBe(true);
    expect(s.context.message).toBe("changed my mind");
  });

  it("ignores CANCEL and CONFIRM once replay has started", async () => {
    const replay = gate();
    const { machine } = fakes({ replay: () => replay.promise });
    const a = start(machine, { require_confirmation: false });
    a.send({ type: "START" });
    await waitFor(a, at("REPLAYING"));
    a.send({ type: "CANCEL" });
    a.send({ type: "CONFIRM" });
    expect(a.getSnapshot().value).toBe("REPLAYING");
    replay.resolve();
    await waitFor(a, at("COMPLETED"));
  });

  it("restores a persisted snapshot where it stood: the stage's actor runs again with its input", async () => {
    const replay = gate();
    const first = fakes({ replay: () => replay.promise });
    const a = start(first.machine, { require_confirmation: false });
    a.send({ type: "START" });
    await waitFor(a, at("REPLAYING"));
    const persisted = JSON.parse(JSON.stringify(a.getPersistedSnapshot()));
    a.stop();

    const second = fakes();
    const b = createActor(second.machine, { snapshot: persisted as SnapshotFrom<typeof second.machine>, input }).start();
    expect(b.getSnapshot().value).toBe("REPLAYING");
    await waitFor(b, at("COMPLETED"));
    expect((second.calls.replay![0]!.input as StageInput).job_id).toBe("job_1");
    expect(second.calls.validate).toBeUndefined();
  });

  it("restores AWAITING_CONFIRMATION with the same deadline, not a new one", async () => {
    const first = fakes();
    const a = start(first.machine);
    a.send({ type: "START" });
    const s = await waitFor(a, at("AWAITING_CONFIRMATION"));
    const persisted = JSON.parse(JSON.stringify(a.getPersistedSnapshot()));
    a.stop();
    const second = fakes();
    createActor(second.machine, { snapshot: persisted, input }).start();
    await new Promise((r) => setTimeout(r, 10));
    expect(second.calls.confirmTimer![0]!.input).toEqual({ deadline: s.context.confirm_deadline });
  });
});
