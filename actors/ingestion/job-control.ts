import { AppError } from "../../src/errors.js";
import { TERMINAL, type JobRecord, type JobStatus, type Stage } from "../../src/ingestion/job-record.js";
import { shownStage, wireStatus } from "../../src/ingestion/job-view.js";
import type { JobContext, JobMachineInput, JobStateName } from "./job-machine.js";

import type { JobControl } from "../../src/ingestion/job-control.js";

export type { JobControl };

/** Why an operation that needs the review gate is refused elsewhere. */
export const AT_REVIEW_ONLY: Partial<Record<JobControl["op"], string>> = {
  confirm: "only a job awaiting confirmation can be confirmed",
  revise: "only a job awaiting confirmation can be changed (summary_types, skip_backfill)",
  remove_patient: "patients can be removed from a job only while it awaits confirmation",
};

export const machineInput = (r: JobRecord, confirmTimeoutMs: number): JobMachineInput => ({
  job_id: r.job_id,
  organization_id: r.organization_id,
  project_id: r.project_id,
  require_confirmation: r.require_confirmation,
  rollback_on_cancel: r.rollback_on_cancel,
  summary_types: r.summary_types,
  skip_backfill: r.skip_backfill,
  confirm_timeout_ms: confirmTimeoutMs,
});

/** The stored status of a machine state ("running" for every working one). */
export function statusOf(value: JobStateName, r: JobRecord): JobStatus {
  switch (value) {
    case "QUEUED":
      return "queued";
    case "AWAITING_CONFIRMATION":
      return "awaiting_confirmation";
    case "COMPLETED":
      return r.logs_failed > 0 ? "completed_with_errors" : "completed";
    case "FAILED":
      return "failed";
    case "CANCELLED":
      return "cancelled";
    default:
      return "running";
  }
}

/** A 409 naming the job's status and stage as answers show them (the SDK then reads the job to see where it stands). */
export function conflict(r: JobRecord, why: string): AppError {
  const status = wireStatus(r);
  const stage = shownStage(r);
  const is = r.cancelling ? `being cancelled (stage ${stage}, cancelled at ${r.stage})` : `${status} (stage ${stage})`;
  return new AppError("conflict", `job ${r.job_id} is ${is}: ${why}`, [{ type: "invalid_job_state", message: why, status, stage }]);
}

/** What a job being cancelled says it does, from the moment the cancel is accepted (the cleanup then names its count). */
export function cancellingMessage(r: JobRecord): string {
  return r.rollback_on_cancel
    ? `cancelling: rolling back ${r.patients_created} created patient(s)`
    : "cancelling: dropping the staged logs (created patients are kept)";
}

/** Why a job ended, and, when its rollback kept created patients, that it did: the cancel's answer warns. */
export function endMessage(message: string | null, r: JobRecord): string | null {
  if (r.patients_rollback_kept === 0) return message;
  const kept = `rollback kept ${r.patients_rollback_kept} created patient(s) that received data not from this job (see rollback_kept)`;
  return message === null ? kept : `${message}; ${kept}`;
}

/**
 * A cancel of a job already cancelled. Without a rollback choice, or with the one the
 * cancel made, it answers the job again (the hosted SDK retries a bodiless cancel, and a
 * retried request must be safe). A different choice cannot be carried out any more (the
 * job's working documents are gone, and removed patients cannot come back): 409 saying
 * what the cancel did, rather than a 200 that silently changes nothing.
 */
export function cancelAgain(r: JobRecord, rollback: boolean | undefined): JobRecord {
  if (rollback === undefined || rollback === r.rollback_on_cancel) return r;
  const did = r.rollback_on_cancel
    ? `it was cancelled with rollback: ${r.patients_rolled_back} created patient(s) were removed${r.patients_rollback_kept > 0 ? ` and ${r.patients_rollback_kept} kept` : ""}, and cannot be restored`
    : `it was cancelled without rollback: its ${r.patients_created} created patient(s) were kept, and its working documents are gone, so they can no longer be rolled back (delete them with DELETE /v1/patients/{id})`;
  throw conflict(r, `already cancelled; ${did}`);
}

/** Machine states that are stages of the record (the others are outcomes, or a clean-up). */
const STAGE_STATES = new Set<string>(["QUEUED", "VALIDATING", "INSERTING_PATIENTS", "INSERTING_LOGS", "AWAITING_CONFIRMATION", "REPLAYING", "BACKFILLING"]);

/**
 * Mirrors the machine entering `value` into the job's record (stage, status, times, what
 * the context decided), at `now`. True when the job has ended: its working files can go.
 */
export function recordTransition(r: JobRecord, value: JobStateName, ctx: JobContext, now: Date): boolean {
  if (r.awaiting_since !== null && value !== "AWAITING_CONFIRMATION") {
    r.awaited_ms += now.getTime() - Date.parse(r.awaiting_since);
    r.awaiting_since = null;
  }
  if (STAGE_STATES.has(value) && r.stage !== value) {
    r.stage = value as Stage;
    r.stage_fraction = 0;
  }
  if (value === "AWAITING_CONFIRMATION") r.awaiting_since ??= now.toISOString();
  if (value !== "QUEUED") r.started_at ??= now.toISOString();
  r.summary_types = ctx.summary_types;
  r.skip_backfill = ctx.skip_backfill === true;
  r.rollback_on_cancel = ctx.rollback_on_cancel;
  r.status = statusOf(value, r);
  r.cancelling = value === "CANCELLING";
  if (r.cancelling) r.status_message = cancellingMessage(r);
  if (value === "FAILED" || value === "CANCELLED") r.status_message = endMessage(ctx.message, r);
  if (!TERMINAL.has(r.status)) return false;
  r.completed_at = now.toISOString();
  if (value === "COMPLETED" && ctx.backfill_ok === false) r.backfill_status = "failed";
  return true;
}
