import type { JobRecord } from "./job-record.js";

/** What the routes ask of the runner (locally, or over NATS from an api process). */
export type JobControl =
  | { op: "wake"; project_id: string; job_id: string }
  | { op: "confirm"; project_id: string; job_id: string; summary_types?: string[] }
  /** `rollback` overrides the job's rollback_on_cancel for this cancel; absent: the job's setting decides. */
  | { op: "cancel"; project_id: string; job_id: string; rollback?: boolean }
  | { op: "retry_backfill"; project_id: string; job_id: string; summary_types?: string[] }
  /** PATCH of a job awaiting confirmation: what confirming it will do. */
  | { op: "revise"; project_id: string; job_id: string; summary_types?: string[]; skip_backfill?: boolean }
  /** DELETE of one patient from a job awaiting confirmation. */
  | { op: "remove_patient"; project_id: string; job_id: string; patient_id: string };

/** What carries out a JobControl: the job runner of this process (actors/ingestion/job-runner.ts). */
export interface JobController {
  /** The job afterwards; null when this process does not hold it (the record then tells). */
  control(c: JobControl): Promise<JobRecord | null>;
}
