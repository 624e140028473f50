import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rollBackCreated } from "../../actors/ingestion/rollback.js";
import type { StageDeps } from "../../actors/ingestion/stage-deps.js";
import { validateEnvelope } from "../../src/logs/envelope.js";
import { toRecord } from "../../src/logs/log-writer.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "20" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST" | "PUT", url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: t.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });

let seq = 0;
const mrn = () => `MRN-RB-${process.pid}-${Date.now()}-${++seq}`;
const patientRow = (value: string) => ({ type: "patient", data: { first_name: "Bea", last_name: "Baker", timezone: "UTC", external_identifiers: [{ system: "mrn", value }] } });
const pain = (score: number) => ({ instrument: "esas_r", symptoms: [{ name: "pain", score }] });
const painLog = (patient_id: string, ts: string, score: number) => ({ log_type: "symptom_report", patient_id, timestamp: ts, payload: pain(score) });
const rowOf = (ref: string, ts: string) => ({ type: "log", data: { event_type: "symptom_report", patient_id: ref, timestamp: ts, payload: pain(3) } });

async function awaitingJob(records: unknown[]): Promise<string> {
  const r = await inject("POST", "/v1/ingestion/jobs", { rollback_on_cancel: false, records });
  expect(r.statusCode, r.body).toBe(201);
  const id = r.json().job_id as string;
  const end = Date.now() + 20_000;
  while ((await inject("GET", `/v1/ingestion/jobs/${id}`)).json().status !== "awaiting_confirmation" && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  return id;
}
const patientByMrn = async (value: string) => ((await inject("GET", `/v1/patients?system=mrn&value=${encodeURIComponent(value)}`)).json().patients[0]?.id as string | undefined) ?? null;
const logsOf = async (pid: string) => (await inject("GET", `/v1/state/${pid}/logs`)).json().logs as unknown[];

describe("rolling back a cancelled job", () => {
  it("keeps a created patient that received a live log or an update, says so, and removes the untouched one", async () => {
    const [a, b, c] = [mrn(), mrn(), mrn()];
    const id = await awaitingJob([patientRow(a), patientRow(b), patientRow(c), rowOf(a, "2026-03-01T08:00:00Z"), rowOf(b, "2026-03-01T08:00:00Z")]);
    const [pa, pb, pc] = [(await patientByMrn(a))!, (await patientByMrn(b))!, (await patientByMrn(c))!];
    const live = await inject("POST", "/v1/logs/batch", { logs: [painLog(pa, "2026-03-02T08:00:00Z", 7)] });
    expect(live.json().accepted, live.body).toBe(1);
    expect((await inject("PUT", `/v1/patients/${pc}`, { email: "bea@example.org" })).statusCode).toBe(200);

    const r = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollback: true });
    expect(r.statusCode, r.body).toBe(200);
    const job = r.json();
    expect(job).toMatchObject({ status: "cancelled", patients_rolled_back: 1, patients_rollback_kept: 2 });
    expect(job.rollback_kept).toEqual(expect.arrayContaining([{ patient_id: pa, reason: "live_logs" }, { patient_id: pc, reason: "updated" }]));
    expect(job.status_message).toContain("kept 2 created patient(s)");

    expect((await inject("GET", `/v1/patients/${pa}`)).statusCode).toBe(200);
    expect(await logsOf(pa)).toHaveLength(1);
    expect((await inject("GET", `/v1/patients/${pc}`)).json()).toMatchObject({ email: "bea@example.org", status: "active" });
    expect(await patientByMrn(b)).toBeNull();
    expect((await inject("GET", `/v1/patients/${pb}`)).statusCode).toBe(404);
  });

  it("reads as being cancelled from the moment the cancel is accepted, and refuses a confirm meanwhile saying so", async () => {
    const values = [mrn(), mrn(), mrn()];
    const id = await awaitingJob(values.map(patientRow));
    let done = false;
    const cancel = inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollback: true }).finally(() => (done = true));
    let seen: Record<string, unknown> | null = null;
    while (!done && seen === null) {
      const j = (await inject("GET", `/v1/ingestion/jobs/${id}`)).json();
      if (j.stage === "CANCELLING") seen = j;
      else await new Promise((r) => setTimeout(r, 5));
    }
    // The rollback waits ROLLBACK_SETTLE_MS after fencing: the window is there to see.
    expect(seen).toMatchObject({ status: "awaiting_confirmation", rollback_on_cancel: true, status_message: "cancelling: rolling back 3 created patient(s)" });
    expect(seen!.stage_work).toMatchObject({ key: "cancelling", unit: "patients", total: 3 });
    const confirm = await inject("POST", `/v1/ingestion/jobs/${id}/confirm`);
    expect(confirm.statusCode).toBe(409);
    expect(confirm.json().message).toMatch(/is being cancelled \(stage CANCELLING, cancelled at AWAITING_CONFIRMATION\): it is being cancelled; only a job awaiting confirmation/);
    expect(done).toBe(false);
    expect((await cancel).json()).toMatchObject({ status: "cancelled", stage: "AWAITING_CONFIRMATION", patients_rolled_back: 3, status_message: "cancelled on request" });
    for (const v of values) expect(await patientByMrn(v)).toBeNull();
  });

  it("never loses a live log accepted while the rollback runs: its patient is kept, else the write was refused", async () => {
    const a = mrn();
    const id = await awaitingJob([patientRow(a), rowOf(a, "2026-03-01T08:00:00Z")]);
    const pa = (await patientByMrn(a))!;
    let accepted = 0;
    let done = false;
    const cancel = inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollback: true }).finally(() => (done = true));
    // Writes before, during and after the rollback's fence; each is either stored or refused.
    for (let i = 0; !done || i < 3; i++) {
      const w = (await inject("POST", "/v1/logs/batch", { logs: [painLog(pa, `2026-03-02T08:00:${String(i % 60).padStart(2, "0")}Z`, 7)] })).json();
      accepted += w.accepted as number;
      if (w.accepted === 0) expect(w.errors[0].code).toBe("patient_not_found");
      await new Promise((r) => setTimeout(r, 5));
    }
    const job = (await cancel).json();
    if (accepted > 0) {
      expect(job).toMatchObject({ patients_rolled_back: 0, patients_rollback_kept: 1, rollback_kept: [{ patient_id: pa, reason: "live_logs" }] });
      expect((await inject("GET", `/v1/patients/${pa}`)).json()).toMatchObject({ status: "active" });
      expect(await logsOf(pa)).toHaveLength(accepted);
    } else {
      expect(job).toMatchObject({ patients_rolled_back: 1, patients_rollback_kept: 0 });
    }
  });
});

describe("the rollback's fence", () => {
  it("gives a patient back when a write admitted before the fence lands while the rollback waits", async () => {
    const p = (await inject("POST", "/v1/patients", { first_name: "Late", last_name: "Write", timezone: "UTC" })).json();
    // The bootstrap key's project: the only one of its organization here.
    const project = (await inject("GET", "/v1/projects")).json().projects[0];
    const scope = { organization_id: project.organization_id as string, project_id: project.id as string };
    const { topology, patients, stateStore } = t.services;
    const deps = { patients, stateStore, staging: { js: topology.js, jsm: topology.jsm, names: topology.names } } as unknown as StageDeps;
    const rollback = rollBackCreated(deps, scope, [p.id], new AbortController().signal, 400);
    // Fenced: a new write finds no active patient.
    await new Promise((r) => setTimeout(r, 150));
    const refused = (await inject("POST", "/v1/logs/batch", { logs: [painLog(p.id, "2026-03-02T08:00:00Z", 7)] })).json();
    expect(refused).toMatchObject({ accepted: 0, errors: [{ code: "patient_not_found" }] });
    // One that passed the patient check before the fence is published now, as the writer would.
    const at = new Date().toISOString();
    const v = validateEnvelope(painLog(p.id, "2026-03-02T09:00:00Z", 6), ["log"], at);
    if (!v.ok) throw new Error(v.message);
    await topology.js.publish(topology.names.logSubject(scope.organization_id, scope.project_id, p.id), JSON.stringify({ logs: [toRecord(v.log, scope, at, undefined)] }));
    expect(await rollback).toEqual({ removed: 0, kept: [{ patient_id: p.id, reason: "live_logs" }], keptTotal: 1, gone: 0 });
    expect(await patients.peek(scope.project_id, p.id)).toMatchObject({ status: "active", updated_at: p.created_at });
    expect((await inject("POST", "/v1/logs/batch", { logs: [painLog(p.id, "2026-03-02T10:00:00Z", 5)] })).json().accepted).toBe(1);
  });
});

describe("taking a created patient out of a job under review", () => {
  it("keeps it (deleted, not erased) when a write admitted before its deletion lands while the removal waits", async () => {
    const a = mrn();
    const id = await awaitingJob([patientRow(a), rowOf(a, "2026-03-01T08:00:00Z")]);
    const pa = (await patientByMrn(a))!;
    const project = (await inject("GET", "/v1/projects")).json().projects[0];
    const scope = { organization_id: project.organization_id as string, project_id: project.id as string };
    const removal = t.app.inject({ method: "DELETE", url: `/v1/ingestion/jobs/${id}/patients/${pa}`, headers: t.auth });
    await new Promise((r) => setTimeout(r, 150));
    const { topology, patients } = t.services;
    const at = new Date().toISOString();
    const v = validateEnvelope(painLog(pa, "2026-03-02T09:00:00Z", 6), ["log"], at);
    if (!v.ok) throw new Error(v.message);
    await topology.js.publish(topology.names.logSubject(scope.organization_id, scope.project_id, pa), JSON.stringify({ logs: [toRecord(v.log, scope, at, undefined)] }));
    expect((await removal).statusCode).toBeLessThan(300);
    // The log's patient is still on record, deleted as DELETE /v1/patients/{id} leaves one.
    expect(await patients.peek(scope.project_id, pa)).toMatchObject({ id: pa, status: "deleted" });
  });
});
