import { describe, expect, it } from "vitest";
import { newJobRecord, STAGES, upgradeRecord, type JobRecord } from "../../src/ingestion/job-record.js";
import { matchesStatus, publicJob, WIRE_STATUSES, wireStatus } from "../../src/ingestion/job-view.js";

const record = (over: Partial<JobRecord> = {}): JobRecord => ({
  ...newJobRecord(
    { job_id: "job_1", organization_id: "org_1", project_id: "prj_1", require_confirmation: true, rollback_on_cancel: false, idempotency_key: null, summary_types: null, source: { object: "x", inline: true, bytes: 1000 } },
    "2026-01-01T00:00:00.000Z",
  ),
  ...over,
});

describe("the job's status as answers show it", () => {
  it("shows a stored running job as the stage at work, and every other stored status as it is", () => {
    const shown = Object.fromEntries(STAGES.map((stage) => [stage, wireStatus({ status: "running", stage })]));
    expect(shown).toEqual({
      QUEUED: "queued",
      VALIDATING: "validating",
      INSERTING_PATIENTS: "inserting_patients",
      INSERTING_LOGS: "inserting_logs",
      AWAITING_CONFIRMATION: "awaiting_confirmation",
      REPLAYING: "replaying",
      BACKFILLING: "backfilling",
    });
    for (const status of ["queued", "awaiting_confirmation", "completed", "completed_with_errors", "failed", "cancelled"] as const) {
      expect(wireStatus({ status, stage: "BACKFILLING" })).toBe(status);
    }
    expect(Object.values(shown).every((s) => (WIRE_STATUSES as readonly string[]).includes(s))).toBe(true);
  });

  it("shows a stored job being cancelled (as read after a restart mid-cancel) with stage CANCELLING, a status the SDK parses and the rollback's progress", () => {
    const r = record({ status: "running", stage: "AWAITING_CONFIRMATION", cancelling: true, rollback_on_cancel: true, patients_created: 3000, patients_rolled_back: 1200, patients_rollback_kept: 1, status_message: "cancelling: rolling back 3000 created patient(s)" });
    expect(publicJob(r)).toMatchObject({ status: "awaiting_confirmation", stage: "CANCELLING", status_message: "cancelling: rolling back 3000 created patient(s)", patients_rolled_back: 1200, stage_work: { key: "cancelling", done: 1201, total: 3000 } });
    expect(publicJob({ ...r, cancelling: false, status: "cancelled" })).toMatchObject({ stage: "AWAITING_CONFIRMATION", stage_work: null });
    // A record of an earlier build has no such field: not being cancelled.
    const { cancelling: _, ...old } = record();
    expect(upgradeRecord(old as JobRecord).cancelling).toBe(false);
  });

  it("shows a finished job whose view backfill runs again as backfilling, and as its outcome once that ends", () => {
    const retried = { status: "completed" as const, stage: "BACKFILLING" as const, backfill_status: "running" as const };
    expect(wireStatus(retried)).toBe("backfilling");
    expect(matchesStatus(retried, "running")).toBe(true);
    expect(wireStatus({ ...retried, backfill_status: "completed" })).toBe("completed");
    expect(wireStatus({ ...retried, status: "completed_with_errors", backfill_status: "failed" })).toBe("completed_with_errors");
  });

  it('keeps "running" as a filter for every job at work, and filters on the shown status otherwise', () => {
    const replaying = { status: "running" as const, stage: "REPLAYING" as const };
    expect(matchesStatus(replaying, "running")).toBe(true);
    expect(matchesStatus(replaying, "replaying")).toBe(true);
    expect(matchesStatus(replaying, "validating")).toBe(false);
    expect(matchesStatus({ status: "awaiting_confirmation", stage: "AWAITING_CONFIRMATION" }, "running")).toBe(false);
  });
});

describe("a job record of an earlier build", () => {
  it("reads with the fields added since, its replayed logs kept, and the logs it staged counted as inserted at the review", () => {
    const old = record({ status: "awaiting_confirmation", stage: "AWAITING_CONFIRMATION", logs_staged: 7, logs_processed: 0 }) as unknown as Record<string, unknown>;
    for (const k of ["logs_replayed", "patient_log_counts", "patient_replay_statuses", "removed_patients", "skip_backfill"]) delete old[k];
    const r = upgradeRecord(old as unknown as JobRecord);
    expect(r).toMatchObject({ logs_processed: 7, logs_replayed: 0, patient_log_counts: {}, patient_replay_statuses: {}, removed_patients: [], skip_backfill: false });
  });
});

describe("the job as answered", () => {
  it("lists every view type when none were chosen, and counts the stage's work in its unit", () => {
    const j = publicJob(record({ status: "running", stage: "INSERTING_PATIENTS", patients_processed: 3, patients_total: 8 }));
    expect(j.summary_types.length).toBeGreaterThan(1);
    expect(j.stage_work).toEqual({ key: "inserting_patients", label: "Patient rows placed", unit: "patients", done: 3, total: 8 });
    expect(publicJob(record({ status: "awaiting_confirmation", stage: "AWAITING_CONFIRMATION" })).stage_work).toBeNull();
    expect(publicJob(record({ summary_types: ["labs_snapshot"] })).summary_types).toEqual(["labs_snapshot"]);
  });

  it("gives the backfill's progress while it runs, none when it was skipped", () => {
    expect(publicJob(record({ backfill_status: "running", backfill_patients_done: 1, backfill_patients_total: 4 })).backfill_progress_pct).toBe(25);
    expect(publicJob(record({ backfill_status: "completed" })).backfill_progress_pct).toBe(100);
    expect(publicJob(record({ backfill_status: "skipped" })).backfill_progress_pct).toBeNull();
  });
});
