import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../support/service-process.js";
import { memberGroup, type Group, type Member } from "../support/members.js";
import { appliedEvents } from "../support/log-stream.js";

/**
 * Ingestion jobs across members started as `npm start` starts them: the `jobs` lease's
 * holder runs every job; when it is lost (SIGKILL) or stopped (SIGTERM) another member
 * takes the lease and resumes each job from its persisted snapshot, with the confirmation
 * time-out it had. Control requests reach the new holder through any member's API.
 *
 * PSS_LEASE_TTL_MS is 3000 here (the default is 6000), so a killed holder's lease lapses
 * sooner and the file stays near a minute and a half.
 */

let g: Group;
const TTL_MS = 3_000;
const TERMINAL = ["completed", "completed_with_errors", "failed", "cancelled"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  ensureBuilt();
  g = await memberGroup(3, { PSS_LEASE_TTL_MS: String(TTL_MS) });
  await Promise.all(g.members.map((m) => g.start(m)));
}, 240_000);

afterAll(async () => {
  await g?.drop();
}, 60_000);

type Job = { job_id: string; status: string; stage: string; status_message: string | null; created_at: string; completed_at: string | null; logs_total: number; logs_replayed: number; logs_duplicate: number; logs_failed: number };

const live = () => g.members.filter((m) => m.process);

/**
 * A request that some member must answer: a 503 (no job runner while the lease is between
 * holders, or a member stopping) or a refused connection is tried again, on the next live member.
 */
async function call(method: string, path: string, body?: unknown, via?: Member, withinMs = 30_000): Promise<{ status: number; json: any; text: string }> {
  const end = Date.now() + withinMs;
  for (let i = 0; ; i++) {
    const ms = live();
    const m = via?.process ? via : ms[i % ms.length]!;
    const r = await g.call(m, method, path, body).catch(() => null);
    if (r && r.status !== 503) return r;
    if (Date.now() > end) throw new Error(`${method} ${path}: ${r ? `${r.status} ${r.text}` : "no answer"}`);
    await sleep(200);
  }
}

async function createJob(via: Member, body: Record<string, unknown>): Promise<string> {
  const r = await call("POST", "/v1/ingestion/jobs", body, via);
  expect(r.status, r.text).toBe(201);
  return (r.json as Job).job_id;
}

async function waitJob(id: string, done: (j: Job) => boolean, withinMs: number): Promise<Job> {
  const end = Date.now() + withinMs;
  for (;;) {
    const j = (await call("GET", `/v1/ingestion/jobs/${id}`)).json as Job;
    if (done(j)) return j;
    if (Date.now() > end) throw new Error(`job ${id} still ${j.status} (${j.stage}) after ${withinMs} ms: ${JSON.stringify(j).slice(0, 400)}`);
    await sleep(100);
  }
}

/** The one live member (of `among`) whose worker holds `jobs`, once there is one. */
async function jobsHolder(withinMs: number, among: readonly Member[] = live()): Promise<Member> {
  const end = Date.now() + withinMs;
  for (;;) {
    const hs = await g.holders("jobs");
    if (hs.length === 1 && among.includes(hs[0]!)) return hs[0]!;
    if (Date.now() > end) {
      const lines = g.members.flatMap((m) => (m.process?.lines ?? []).filter((l) => /lease|job/.test(String(l.msg))).slice(-8).map((l) => `${m.name} ${JSON.stringify(l)}`));
      throw new Error(`no single holder of jobs within ${withinMs} ms (${hs.map((m) => m.name).join(",")})\n${lines.join("\n")}`);
    }
    await sleep(100);
  }
}

/** The pid of the member's worker process that holds the lease on `resource`. */
async function workerOf(m: Member, resource: string): Promise<number> {
  const h = (await g.call(m, "GET", "/healthz")).json as { processes: { pid: number; leases: { resource: string }[] }[] };
  const p = h.processes.find((x) => x.leases.some((l) => l.resource === resource));
  if (!p) throw new Error(`${m.name} holds no ${resource}`);
  return p.pid;
}

/** A file of `patients` patients with `perPatient` logs each, interleaved, named by `prefix`. */
function file(prefix: string, patients: number, perPatient: number): unknown[] {
  const rows: unknown[] = [];
  for (let p = 0; p < patients; p++) rows.push({ type: "patient", data: { first_name: `P${p}`, external_identifiers: [{ system: "mrn", value: `${prefix}-${p}` }] } });
  for (let i = 0; i < perPatient; i++) {
    for (let p = 0; p < patients; p++) {
      const timestamp = new Date(Date.UTC(2026, 0, 1) + i * 60_000 + p * 1000).toISOString();
      rows.push(i % 3 === 0
        ? { type: "log", data: { event_type: "symptom_report", patient_id: `${prefix}-${p}`, timestamp, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: (i + p) % 11 }] } } }
        : { type: "log", data: { event_type: "user_login", patient_id: `${prefix}-${p}`, timestamp, payload: {} } });
    }
  }
  return rows;
}

/** Applied logs of the patient with the external identifier `value`, as a live member answers. */
async function applied(value: string): Promise<{ rows: number; logs: number }> {
  const pid = ((await call("GET", `/v1/patients?system=mrn&value=${encodeURIComponent(value)}`)).json as { patients: { id: string }[] }).patients[0]!.id;
  return appliedEvents(g, live()[0]!, pid);
}

async function everyLogOnce(prefix: string, patients: number, perPatient: number): Promise<void> {
  for (let p = 0; p < patients; p++) expect(await applied(`${prefix}-${p}`), `patient ${prefix}-${p}: each log applied once`).toEqual({ rows: perPatient, logs: perPatient });
}

describe("ingestion jobs when the member running them is lost", () => {
  it("a job awaiting confirmation is confirmed through a survivor after its holder's SIGKILL, and completes", async () => {
    const prefix = `a${randomBytes(3).toString("hex")}`;
    const [P, N] = [10, 12];
    const id = await createJob(g.members[0]!, { records: file(prefix, P, N) });
    await waitJob(id, (j) => j.status === "awaiting_confirmation", 60_000);
    const holder = await jobsHolder(30_000);
    const killedAt = Date.now();
    await g.kill(holder);
    const next = await jobsHolder(15_000, live());
    const tookMs = Date.now() - killedAt;
    expect(tookMs).toBeLessThan(15_000);
    // Through a member other than the new holder where there is one: its api process reaches the runner over NATS.
    const via = live().find((m) => m !== next) ?? next;
    const c = await call("POST", `/v1/ingestion/jobs/${id}/confirm`, {}, via);
    expect(c.status, c.text).toBe(200);
    const done = await waitJob(id, (j) => TERMINAL.includes(j.status), 90_000);
    expect(done).toMatchObject({ status: "completed", logs_total: P * N, logs_replayed: P * N, logs_duplicate: 0, logs_failed: 0 });
    await everyLogOnce(prefix, P, N);
    console.log(`jobs held again ${tookMs} ms after the SIGKILL of ${holder.name} (by ${next.name}); confirmed via ${via.name}`);
  }, 180_000);

  it("a holder paused past its lease (SIGSTOP) writes nothing over a job its successor went on with", async () => {
    const prefix = `p${randomBytes(3).toString("hex")}`;
    const [P, N] = [3, 4];
    const id = await createJob(live()[0]!, { records: file(prefix, P, N) });
    await waitJob(id, (j) => j.status === "awaiting_confirmation", 60_000);
    const holder = await jobsHolder(30_000);
    const pid = await workerOf(holder, "jobs");
    process.kill(pid, "SIGSTOP");
    try {
      const next = await jobsHolder(15_000, live().filter((m) => m !== holder));
      expect((await call("POST", `/v1/ingestion/jobs/${id}/confirm`, {}, next)).status).toBe(200);
      await waitJob(id, (j) => TERMINAL.includes(j.status), 60_000);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // Woken, the paused worker finds its lease lapsed and stops its runner, which saves every job it held.
    await holder.process!.line((l) => l.msg === "lease given up" && l.resource === "jobs" && l.pid === pid, 15_000);
    await sleep(1_000);
    const after = await waitJob(id, () => true, 10_000);
    expect(after).toMatchObject({ status: "completed", logs_replayed: P * N });
    await everyLogOnce(prefix, P, N);
  }, 120_000);

  it("a job in the middle of REPLAYING when its holder stops (SIGTERM) resumes on another member, every log applied once", async () => {
    // 45,000 logs (inline records take up to 50,000 rows): a replay of some seconds, so a stop
    // sent as it starts mostly lands in its middle. When the replay wins the race (a quiet
    // machine), the job must still be whole, and the stop is tried again on a new job.
    const [P, N] = [150, 300];
    let attempt = 0;
    let prefix: string;
    let id: string;
    let holder: Member;
    let left: Job;
    let stopMs: number;
    for (;;) {
      attempt++;
      for (const m of g.members) if (!m.process) await g.start(m);
      holder = await jobsHolder(30_000);
      prefix = `c${randomBytes(3).toString("hex")}`;
      id = await createJob(live()[0]!, { records: file(prefix, P, N), require_confirmation: false });
      await waitJob(id, (j) => j.status === "replaying", 120_000);
      const stopAt = Date.now();
      await g.stop(holder);
      stopMs = Date.now() - stopAt;
      // Not finished when the holder let go (a resumed staging bucket counts its logs again from the bucket's start).
      left = await waitJob(id, () => true, 10_000);
      if (left.stage === "REPLAYING") break;
      const whole = await waitJob(id, (j) => TERMINAL.includes(j.status), 180_000);
      expect(whole).toMatchObject({ status: "completed", logs_replayed: P * N, logs_duplicate: 0, logs_failed: 0 });
      expect(attempt, "a stop landed mid-replay within three tries").toBeLessThan(3);
    }
    const next = await jobsHolder(15_000);
    const done = await waitJob(id, (j) => TERMINAL.includes(j.status), 180_000);
    expect(done).toMatchObject({ status: "completed", logs_total: P * N, logs_replayed: P * N, logs_duplicate: 0, logs_failed: 0 });
    await everyLogOnce(prefix, P, N);
    console.log(`replay stopped (${left.logs_replayed} of ${P * N} logs counted, SIGTERM to exit ${stopMs} ms) on ${holder.name}, finished on ${next.name}`);
  }, 300_000);

  it("the confirmation time-out of a job whose holder was killed cancels it on the new holder", async () => {
    // The time-out is short on every member: each restarts with it.
    const TIMEOUT_MS = 8_000;
    for (const m of live()) await g.stop(m);
    await Promise.all(g.members.map((m) => g.start(m, { PSS_JOB_CONFIRM_TIMEOUT_MS: String(TIMEOUT_MS) })));
    const prefix = `b${randomBytes(3).toString("hex")}`;
    const id = await createJob(g.members[0]!, { records: file(prefix, 2, 3) });
    const awaiting = await waitJob(id, (j) => j.status === "awaiting_confirmation", 60_000);
    // The deadline lies between the job's creation and our sight of it awaiting, plus the time-out.
    const [earliest, latest] = [Date.parse(awaiting.created_at) + TIMEOUT_MS, Date.now() + TIMEOUT_MS];
    const holder = await jobsHolder(30_000);
    await g.kill(holder);
    const next = await jobsHolder(15_000, live());
    const tookOverAt = Date.now();
    const done = await waitJob(id, (j) => TERMINAL.includes(j.status), TIMEOUT_MS + 20_000);
    expect(done).toMatchObject({ status: "cancelled", stage: "AWAITING_CONFIRMATION" });
    expect(done.status_message).toMatch(/not confirmed within 8 s; cancelled automatically/);
    // The deadline the first holder set, kept: not before it, and not a fresh time-out counted from the hand-over.
    const cancelledAt = Date.parse(done.completed_at!);
    expect(cancelledAt).toBeGreaterThanOrEqual(earliest);
    expect(cancelledAt).toBeLessThan(Math.max(latest, tookOverAt) + 3_000);
    const late = await call("POST", `/v1/ingestion/jobs/${id}/confirm`, {});
    expect(late.status).toBe(409);
    console.log(`jobs held again by ${next.name} ${tookOverAt - (latest - TIMEOUT_MS)} ms after the job was seen awaiting; cancelled ${cancelledAt - (latest - TIMEOUT_MS)} ms after that`);
  }, 180_000);
});
