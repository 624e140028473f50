import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../../support/stack.js";
import { sdkClient, type SdkClient } from "../../support/olira-sdk.js";
import { VIEW_TYPES } from "../../../readmodels/views/index.js";
import { BEFORE_REVIEW, expectJob, jobCalls, loginRecord, patientRecord, symptomRecord, tag } from "./jobs-sdk.js";

/** The SDK's review of a job awaiting confirmation (olira-compat §8): PATCH, remove a patient, confirm, cancel, retry the backfill. */

let t: TestStack;
let sdk: SdkClient;
let calls: ReturnType<typeof jobCalls>;
beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  sdk = sdkClient(t.app, t.adminKey);
  calls = jobCalls(sdk);
});
afterAll(async () => {
  await t?.close();
});
const job = (id: string) => calls.job(id);
const pollUntil = (id: string, statuses: string[], seen?: string[]) => calls.pollUntil(id, statuses, seen);
const create = (body: Record<string, unknown>) => calls.create(body);
const patientId = (value: string) => calls.patientId(value);

describe("the review: PATCH, remove a patient, confirm", () => {
  /** A job at the review with two patients of the file and one existing patient named by its id. */
  async function atReview() {
    const [a, b] = [`REV-A-${tag()}`, `REV-B-${tag()}`];
    const existing = (await sdk.post("/v1/patients", { first_name: "Known", sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id as string;
    const created = await create({
      idempotency_key: `review-${tag()}`,
      records: [patientRecord(a), patientRecord(b), symptomRecord(a, 1, 2), symptomRecord(b, 2, 5), symptomRecord(b, 3, 7), loginRecord(existing, 4)],
    });
    const review = await pollUntil(created.job_id, ["awaiting_confirmation", "failed"]);
    expect(review.status).toBe("awaiting_confirmation");
    return { id: created.job_id as string, a: (await patientId(a))!, b: (await patientId(b))!, existing };
  }

  it("changes summary_types and skip_backfill while awaiting confirmation, refuses unknown view types (422), and runs the replay without a backfill", async () => {
    const { id, a } = await atReview();
    const types = await sdk.patch(`/v1/ingestion/jobs/${id}`, { summary_types: ["labs_snapshot", "symptom_snapshot"] });
    expect(types.statusCode, types.body).toBe(200);
    expectJob(types.json());
    expect(types.json()).toMatchObject({ status: "awaiting_confirmation", summary_types: ["labs_snapshot", "symptom_snapshot"], skip_backfill: false });
    const unknown = await sdk.patch(`/v1/ingestion/jobs/${id}`, { summary_types: ["emotional_state_snapshot"] });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().message).toMatch(/unknown view type.*emotional_state_snapshot/);
    expect((await sdk.patch(`/v1/ingestion/jobs/${id}`, { skip_backfill: "yes" })).statusCode).toBe(422);
    const skip = await sdk.patch(`/v1/ingestion/jobs/${id}`, { skip_backfill: true });
    expectJob(skip.json());
    expect(skip.json()).toMatchObject({ skip_backfill: true, backfill_status: "skipped", summary_types: ["labs_snapshot", "symptom_snapshot"] });

    const confirmed = await sdk.post(`/v1/ingestion/jobs/${id}/confirm`);
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expectJob(confirmed.json());
    const done = await pollUntil(id, ["completed", "completed_with_errors", "failed"]);
    expect(done).toMatchObject({ status: "completed", stage: "REPLAYING", backfill_status: "skipped", backfill_progress_pct: null, view_backfill_job_id: null, logs_processed: 4 });
    expect(done.patient_replay_statuses[a]).toBe("completed");
    // PATCH after the gate: 409, and the job the SDK then reads is past the review.
    const late = await sdk.patch(`/v1/ingestion/jobs/${id}`, { skip_backfill: true });
    expect(late.statusCode).toBe(409);
    expect(BEFORE_REVIEW).not.toContain((await job(id)).status);
  });

  it("takes one patient out: its staged logs are never replayed, the patient the job created is deleted, the counts follow", async () => {
    const { id, a, b, existing } = await atReview();
    const unknownJob = await sdk.delete(`/v1/ingestion/jobs/job_doesnotexist/patients/${b}`);
    expect(unknownJob.statusCode).toBe(404);
    const stranger = (await sdk.post("/v1/patients", { first_name: "Stranger", sex: "unknown", timezone: "UTC", external_identifiers: [] })).json().id;
    const notInJob = await sdk.delete(`/v1/ingestion/jobs/${id}/patients/${stranger}`);
    expect(notInJob.statusCode).toBe(404);
    expect(notInJob.json().message).toMatch(/not part of ingestion job/);

    const removed = await sdk.delete(`/v1/ingestion/jobs/${id}/patients/${b}`);
    expect(removed.statusCode, removed.body).toBe(200);
    expectJob(removed.json());
    expect(removed.json()).toMatchObject({ patients_total: 1, patients_processed: 1, patients_created: 1, patients_removed: 1, logs_total: 2, logs_processed: 2, logs_removed: 2, logs_by_event_type: { symptom_report: 1, user_login: 1 } });
    expect(Object.keys(removed.json().patient_log_counts).sort()).toEqual([a, existing].sort());
    expect((await sdk.get(`/v1/patients/${b}`)).statusCode).toBe(404);
    // Again (a retry after a lost answer): nothing more changes.
    const again = await sdk.delete(`/v1/ingestion/jobs/${id}/patients/${b}`);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ patients_removed: 1, logs_total: 2 });
    // A patient the job only named is not deleted: its staged log goes.
    const named = await sdk.delete(`/v1/ingestion/jobs/${id}/patients/${existing}`);
    expect(named.json()).toMatchObject({ patients_removed: 2, logs_total: 1, logs_by_event_type: { symptom_report: 1 }, patient_log_counts: { [a]: 1 } });
    expect((await sdk.get(`/v1/patients/${existing}`)).statusCode).toBe(200);

    expect((await sdk.post(`/v1/ingestion/jobs/${id}/confirm`)).statusCode).toBe(200);
    const done = await pollUntil(id, ["completed", "completed_with_errors", "failed"]);
    expect(done).toMatchObject({ status: "completed", logs_processed: 1, logs_replayed: 1, backfill_status: "completed", patient_replay_statuses: { [a]: "completed" } });
    expect((await sdk.get(`/v1/state/${existing}/logs`)).json().count).toBe(0);
    expect((await sdk.get(`/v1/state/${a}/logs`)).json().count).toBe(1);
    const late = await sdk.delete(`/v1/ingestion/jobs/${id}/patients/${a}`);
    expect(late.statusCode).toBe(409);
  });

  it("confirms with no body, then answers a repeated confirm 409 with the job past the review gate, as the SDK's recovery reads it", async () => {
    const { id } = await atReview();
    const first = await sdk.post(`/v1/ingestion/jobs/${id}/confirm`);
    expect(first.statusCode, first.body).toBe(200);
    expectJob(first.json());
    const retried = await sdk.post(`/v1/ingestion/jobs/${id}/confirm`);
    expect(retried.statusCode).toBe(409);
    expect(BEFORE_REVIEW).not.toContain((await job(id)).status);
    const done = await pollUntil(id, ["completed", "completed_with_errors", "failed"]);
    expect(done).toMatchObject({ status: "completed", backfill_status: "completed", backfill_progress_pct: 100, summary_types: [...VIEW_TYPES] });
  });

  it("confirms with initialize_missing_templates, which changes nothing here: no patient lacks a view slot", async () => {
    const { id } = await atReview();
    const r = await sdk.post(`/v1/ingestion/jobs/${id}/confirm`, { initialize_missing_templates: true });
    expect(r.statusCode, r.body).toBe(200);
    expectJob(r.json());
    expect(BEFORE_REVIEW).not.toContain(r.json().status);
    expect((await pollUntil(id, ["completed", "completed_with_errors", "failed"])).status).toBe("completed");
  });

  it("refuses a confirm body field it does not know (confirming cannot be undone), leaving the job at review", async () => {
    const { id } = await atReview();
    const r = await sdk.post(`/v1/ingestion/jobs/${id}/confirm`, { sumary_types: ["symptom_snapshot"] });
    expect(r.statusCode).toBe(422);
    expect(r.json().message).toContain("sumary_types is not an allowed field");
    expect((await job(id)).status).toBe("awaiting_confirmation");
    expect((await sdk.post(`/v1/ingestion/jobs/${id}/cancel`)).statusCode).toBe(200);
  });

  it("cancels twice with no body, and the SDK's 409 recovery after a confirm finds a cancelled job past the gate", async () => {
    const { id } = await atReview();
    const once = await sdk.post(`/v1/ingestion/jobs/${id}/cancel`);
    expect(once.statusCode, once.body).toBe(200);
    expectJob(once.json());
    expect(once.json()).toMatchObject({ status: "cancelled", logs_processed: 0 });
    const twice = await sdk.post(`/v1/ingestion/jobs/${id}/cancel`);
    expect(twice.statusCode).toBe(200);
    expectJob(twice.json());
    expect((await sdk.post(`/v1/ingestion/jobs/${id}/confirm`)).statusCode).toBe(409);
    expect(BEFORE_REVIEW).not.toContain((await job(id)).status);
  });

  it("retries a completed job's view backfill with no body, showing it backfilling until it is done, as the SDK polls for", async () => {
    const { id } = await atReview();
    await sdk.post(`/v1/ingestion/jobs/${id}/confirm`);
    await pollUntil(id, ["completed"]);
    const r = await sdk.post(`/v1/ingestion/jobs/${id}/retry-backfill`);
    expect(r.statusCode, r.body).toBe(200);
    expectJob(r.json());
    expect(r.json()).toMatchObject({ status: "backfilling", backfill_status: "running" });
    const done = await pollUntil(id, ["completed"]);
    expect(done.backfill_status).toBe("completed");
  });
});
