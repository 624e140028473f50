import { describe, expect, it } from "vitest";
import { recordTransition } from "../../actors/ingestion/job-control.js";
import type { JobContext } from "../../actors/ingestion/job-machine.js";
import { newJobRecord, type JobRecord } from "../../src/ingestion/job-record.js";

const record = (): JobRecord => newJobRecord(
  { job_id: "job_1", organization_id: "org_1", project_id: "prj_1", require_confirmation: true, rollback_on_cancel: false, idempotency_key: null, summary_types: null, source: { object: "x", inline: true, bytes: 1000 } },
  "2026-01-01T00:00:00.000Z",
);
const ctx = (over: Partial<JobContext> = {}): JobContext => ({
  job_id: "job_1", organization_id: "org_1", project_id: "prj_1", require_confirmation: true, rollback_on_cancel: false,
  summary_types: null, skip_backfill: false, confirm_timeout_ms: 1_000, confirm_deadline: null, replay_started: false, message: null, backfill_ok: null, ...over,
});
const at = (s: string) => new Date(`2026-01-01T${s}Z`);

describe("a job machine's transition mirrored into the job's record", () => {
  it("moves the stage, starts the clock once, and counts the time awaiting confirmation", () => {
    const r = record();
    expect(recordTransition(r, "VALIDATING", ctx(), at("00:00:01.000"))).toBe(false);
    expect(r).toMatchObject({ stage: "VALIDATING", status: "running", started_at: "2026-01-01T00:00:01.000Z", stage_fraction: 0 });
    recordTransition(r, "AWAITING_CONFIRMATION", ctx(), at("00:00:02.000"));
    expect(r).toMatchObject({ stage: "AWAITING_CONFIRMATION", status: "awaiting_confirmation", awaiting_since: "2026-01-01T00:00:02.000Z" });
    recordTransition(r, "REPLAYING", ctx({ summary_types: ["labs_snapshot"] }), at("00:00:07.500"));
    expect(r).toMatchObject({ stage: "REPLAYING", awaiting_since: null, awaited_ms: 5_500, started_at: "2026-01-01T00:00:01.000Z", summary_types: ["labs_snapshot"] });
  });

  it("a cancel keeps its stage, says what it does, and ends with the machine's reason", () => {
    const r = record();
    recordTransition(r, "INSERTING_LOGS", ctx(), at("00:00:01.000"));
    recordTransition(r, "CANCELLING", ctx({ rollback_on_cancel: true }), at("00:00:02.000"));
    expect(r).toMatchObject({ stage: "INSERTING_LOGS", cancelling: true, rollback_on_cancel: true, status_message: "cancelling: rolling back 0 created patient(s)" });
    expect(recordTransition(r, "CANCELLED", ctx({ rollback_on_cancel: true, message: "cancelled by request" }), at("00:00:03.000"))).toBe(true);
    expect(r).toMatchObject({ status: "cancelled", cancelling: false, status_message: "cancelled by request", completed_at: "2026-01-01T00:00:03.000Z" });
  });

  it("a completed job whose view backfill failed says so", () => {
    const r = record();
    expect(recordTransition(r, "COMPLETED", ctx({ backfill_ok: false }), at("00:01:00.000"))).toBe(true);
    expect(r).toMatchObject({ status: "completed", backfill_status: "failed" });
  });
});
