import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobPreview } from "../../client/types.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "20" });
});
afterAll(async () => {
  await t?.close();
});

const inject = (method: "GET" | "POST" | "DELETE", url: string, payload?: unknown) =>
  t.app.inject({ method, url, headers: t.auth, ...(payload !== undefined ? { payload: payload as object } : {}) });

let seq = 0;
/** A fresh external identifier value, so tests never meet each other's patients. */
const mrn = () => `MRN-R-${process.pid}-${Date.now()}-${++seq}`;
const patientRow = (value: string) => ({ type: "patient", data: { first_name: "Grace", last_name: "Hopper", timezone: "UTC", external_identifiers: [{ system: "mrn", value }] } });
const vitalsRow = (ref: string, ts: string, weight_kg: number) => ({
  type: "log",
  data: { event_type: "vitals_measurement", patient_id: ref, timestamp: ts, payload: { measurements: { weight_kg, heart_rate_bpm: 70 }, context: {}, source: "clinic", collection_datetime: ts } },
});

async function createJob(body: Record<string, unknown>): Promise<string> {
  const r = await inject("POST", "/v1/ingestion/jobs", body);
  expect(r.statusCode, r.body).toBe(201);
  return r.json().job_id as string;
}

/** Polls the job until `done` holds (or 20 s pass). */
async function waitJob(id: string, done: (j: { status: string }) => boolean) {
  const end = Date.now() + 20_000;
  for (;;) {
    const j = (await inject("GET", `/v1/ingestion/jobs/${id}`)).json();
    if (done(j) || Date.now() > end) return j;
    await new Promise((r) => setTimeout(r, 50));
  }
}
const awaiting = (id: string) => waitJob(id, (j) => j.status === "awaiting_confirmation");

async function patientByMrn(value: string): Promise<string | null> {
  const r = (await inject("GET", `/v1/patients?system=mrn&value=${encodeURIComponent(value)}`)).json();
  return r.patients[0]?.id ?? null;
}

describe("cancelling a job under review", () => {
  it("removes the patients the job created when the cancel asks for rollback, whatever the job said", async () => {
    const a = mrn();
    const id = await createJob({ rollback_on_cancel: false, records: [patientRow(a), vitalsRow(a, "2026-03-01T08:00:00Z", 71.5)] });
    await awaiting(id);
    expect(await patientByMrn(a)).not.toBeNull();
    const r = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollback: true });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: "cancelled", rollback_on_cancel: true, patients_rolled_back: 1 });
    expect(await patientByMrn(a)).toBeNull();
  });

  it("keeps the patients the job created when the cancel says no rollback, whatever the job said", async () => {
    const a = mrn();
    const id = await createJob({ rollback_on_cancel: true, records: [patientRow(a), vitalsRow(a, "2026-03-01T08:00:00Z", 71.5)] });
    await awaiting(id);
    const r = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollback: false });
    expect(r.json()).toMatchObject({ status: "cancelled", rollback_on_cancel: false, patients_rolled_back: 0 });
    const pid = await patientByMrn(a);
    expect(pid).not.toBeNull();
    // The staged logs went all the same.
    expect((await inject("GET", `/v1/state/${pid}/logs`)).json().logs).toEqual([]);
  });

  it("lets the job's setting decide when the cancel has no body or an empty one, and refuses a bad body", async () => {
    const a = mrn();
    const id = await createJob({ rollback_on_cancel: true, records: [patientRow(a)] });
    await awaiting(id);
    const bad = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollback: "yes" });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().message).toContain("rollback");
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, {})).json()).toMatchObject({ status: "cancelled", rollback_on_cancel: true, patients_rolled_back: 1 });
    expect(await patientByMrn(a)).toBeNull();
    // Repeatable, body or not.
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/cancel`)).statusCode).toBe(200);
  });

  it("refuses a misspelt field when a job is created, and takes every field the hosted SDK, old ones too, and our client send", async () => {
    const a = mrn();
    const typo = await inject("POST", "/v1/ingestion/jobs", { records: [patientRow(a)], rollback_on_cancle: true, sumary_types: ["labs_snapshot"], idempotency_kye: "x" });
    expect(typo.statusCode, typo.body).toBe(422);
    expect(typo.json()).toMatchObject({ error: true, error_type: "validation_error" });
    expect(typo.json().details.map((d: { field: string }) => d.field)).toEqual(expect.arrayContaining(["rollback_on_cancle"]));
    expect(await patientByMrn(a)).toBeNull();
    const sdk = { require_confirmation: true, idempotency_key: `key-${a}`, summary_types: ["labs_snapshot"], max_event_logs: 100, rollback_on_cancel: true, records: [patientRow(a)] };
    const ours = { format: "jsonl", view_types: ["labs_snapshot"] };
    const r = await inject("POST", "/v1/ingestion/jobs", { ...sdk, ...ours });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ rollback_on_cancel: true, summary_types: ["labs_snapshot"], idempotency_key: `key-${a}` });
    await awaiting(r.json().job_id);
    expect((await inject("POST", `/v1/ingestion/jobs/${r.json().job_id}/cancel`)).statusCode).toBe(200);
  });

  it("refuses an unknown field in the cancel body, naming it and the allowed one", async () => {
    const a = mrn();
    const id = await createJob({ rollback_on_cancel: false, records: [patientRow(a)] });
    await awaiting(id);
    const typo = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollbak: true });
    expect(typo.statusCode).toBe(422);
    expect(typo.json()).toMatchObject({ error: true, error_type: "validation_error", details: [{ field: "rollbak", location: ["body", "rollbak"], input_value: true }] });
    expect(typo.json().message).toContain('rollbak is not an allowed field (allowed: "rollback")');
    expect((await inject("GET", `/v1/ingestion/jobs/${id}`)).json().status).toBe("awaiting_confirmation");
  });

  it("answers a repeated cancel again unless it asks for another rollback choice than the one made", async () => {
    const a = mrn();
    const id = await createJob({ rollback_on_cancel: false, records: [patientRow(a)] });
    await awaiting(id);
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/cancel`)).json()).toMatchObject({ status: "cancelled", rollback_on_cancel: false });
    // What the hosted SDK retries (no body), an empty body, and the same choice: the job again.
    for (const body of [undefined, {}, { rollback: false }]) expect((await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, body)).statusCode).toBe(200);
    const again = await inject("POST", `/v1/ingestion/jobs/${id}/cancel`, { rollback: true });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error_type: "conflict_error", details: [{ type: "invalid_job_state", status: "cancelled" }] });
    expect(again.json().message).toContain("cancelled without rollback: its 1 created patient(s) were kept");
    expect(await patientByMrn(a)).not.toBeNull();
  });
});

describe("previewing a job with invalid lines", () => {
  it("counts per patient the lines of it that failed validation", async () => {
    const [a, b] = [mrn(), mrn()];
    const badPain = (ref: string) => ({ type: "log", data: { event_type: "symptom_report", patient_id: ref, timestamp: "2026-03-01T09:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 99 }] } } });
    const id = await createJob({ records: [patientRow(a), patientRow(b), vitalsRow(a, "2026-03-01T08:00:00Z", 71.5), badPain(a), badPain(b)] });
    expect(await awaiting(id)).toMatchObject({ logs_invalid: 2 });
    const [pa, pb] = [(await patientByMrn(a))!, (await patientByMrn(b))!];
    const preview = (await inject("GET", `/v1/ingestion/jobs/${id}/preview`)).json<JobPreview>();
    expect(preview.patients).toEqual([expect.objectContaining({ patient_id: pa, logs_staged: 1, logs_invalid: 1 })]);
    // A patient whose only lines were invalid staged nothing, and can still be named.
    const one = await inject("GET", `/v1/ingestion/jobs/${id}/preview?patient_id=${pb}`);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().patients).toEqual([expect.objectContaining({ patient_id: pb, logs_staged: 0, logs_invalid: 1, modules: [] })]);
  });
});

const withoutLogIds = (v: unknown) => JSON.parse(JSON.stringify(v).replace(/"log_id":"[^"]*"/g, '"log_id":"-"')) as unknown;

describe("previewing what confirming a job would change", () => {
  it("shows per patient the changes a confirm then makes, and writes nothing", async () => {
    const a = mrn();
    const existing = (await inject("POST", "/v1/patients", { first_name: "Ada", last_name: "Lovelace", timezone: "UTC" })).json().id as string;
    const batch = await inject("POST", "/v1/logs/batch", { logs: [{ ...vitalsRow(existing, "2026-02-01T08:00:00Z", 70).data, log_type: "vitals_measurement", idempotency_key: `w-${a}` }] });
    expect(batch.json().accepted).toBe(1);
    const id = await createJob({
      records: [
        patientRow(a),
        vitalsRow(a, "2026-03-01T08:00:00Z", 71.5),
        vitalsRow(existing, "2026-03-02T08:00:00Z", 72.25),
        // Already stored: the replay passes it by, and so does the preview.
        { type: "log", data: { ...vitalsRow(existing, "2026-02-01T08:00:00Z", 70).data, idempotency_key: `w-${a}` } },
      ],
    });
    await awaiting(id);
    const pa = (await patientByMrn(a))!;
    const logsOf = async (pid: string) => (await inject("GET", `/v1/state/${pid}/logs`)).json().logs as unknown[];

    const r = await inject("GET", `/v1/ingestion/jobs/${id}/preview`);
    expect(r.statusCode, r.body).toBe(200);
    const preview = r.json<JobPreview>();
    expect(preview).toMatchObject({ job_id: id, patients_total: 2 });
    const byId = Object.fromEntries(preview.patients.map((p) => [p.patient_id, p]));
    expect(byId[pa]).toMatchObject({ name: "Grace Hopper", logs_staged: 1, logs_duplicate: 0 });
    expect(byId[existing]).toMatchObject({ name: "Ada Lovelace", logs_staged: 2, logs_duplicate: 1 });
    expect(JSON.stringify(byId[existing]!.modules)).toContain("72.25");
    expect(JSON.stringify(byId[pa]!.modules)).toContain("71.5");

    // One patient by id, and the limit.
    const one = (await inject("GET", `/v1/ingestion/jobs/${id}/preview?patient_id=${existing}`)).json();
    expect(one.patients).toEqual([byId[existing]]);
    expect((await inject("GET", `/v1/ingestion/jobs/${id}/preview?limit=1`)).json().patients).toHaveLength(1);
    expect((await inject("GET", `/v1/ingestion/jobs/${id}/preview?patient_id=pat_nobody`)).statusCode).toBe(404);
    expect((await inject("GET", `/v1/ingestion/jobs/${id}/preview?limit=21`)).statusCode).toBe(422);

    // Nothing was written by the previews.
    expect(await logsOf(pa)).toEqual([]);
    expect(await logsOf(existing)).toHaveLength(1);
    expect((await inject("GET", `/v1/ingestion/jobs/${id}`)).json()).toMatchObject({ status: "awaiting_confirmation", logs_replayed: 0 });

    const before = new Date().toISOString();
    expect((await inject("POST", `/v1/ingestion/jobs/${id}/confirm`)).statusCode).toBe(200);
    await waitJob(id, (j) => j.status.startsWith("completed"));
    for (const pid of [pa, existing]) {
      const diff = (await inject("GET", `/v1/state/${pid}/diff?from=${encodeURIComponent(before)}&basis=known`)).json();
      // The same changes; only the logs' ids are new (a preview names a staged log by its line).
      expect(withoutLogIds(diff.modules), pid).toEqual(withoutLogIds(byId[pid]!.modules));
      expect(JSON.stringify(byId[pid]!.modules)).toMatch(/"log_id":"staged_line_\d{10}"/);
    }
    const late = await inject("GET", `/v1/ingestion/jobs/${id}/preview`);
    expect(late.statusCode).toBe(409);
    expect(late.json().message).toContain("only a job awaiting confirmation");
  });
});
