import { expect } from "vitest";
import { def, expectSdkParses, opt, req, type SdkClient, type Shape } from "../../support/olira-sdk.js";

/**
 * The SDK's ingestion job as its model reads it, and the calls its job methods make, for
 * the tests of olira-compat §8 (jobs.test.ts, jobs-review.test.ts).
 */

/** The SDK's job status enum: any other value fails its parse. */
export const SDK_STATUSES = [
  "queued", "validating", "inserting_patients", "inserting_logs", "awaiting_confirmation", "confirmed", "extracting", "replaying",
  "loading", "rebasing", "embedding", "backfilling", "completed", "completed_with_errors", "failed", "cancelled",
] as const;
/** Statuses before the review gate: a 409 from confirm or PATCH in one of them is re-raised by the SDK. */
export const BEFORE_REVIEW = ["queued", "validating", "inserting_patients", "inserting_logs", "awaiting_confirmation"];

/** An ingestion job as the SDK's model reads it. */
export const JOB: Shape = {
  job_id: req("string"),
  status: req("string", { oneOf: SDK_STATUSES }),
  stage: req("string"),
  progress_pct: def("number"),
  cost_usd: def("number"),
  require_confirmation: def("bool"),
  summary_types: def("list", { of: "string" }),
  ...Object.fromEntries(
    ["patients_total", "patients_processed", "logs_total", "logs_processed", "logs_failed", "tokens_used", "documents_total", "documents_registered", "documents_ocr_succeeded", "documents_ocr_failed"].map((k) => [k, def("int")]),
  ),
  logs_by_event_type: def("object", { of: "int" }),
  patient_log_counts: def("object", { of: "int" }),
  patient_event_type_counts: def("object", { of: "object" }),
  patient_replay_statuses: def("object", { of: "string" }),
  missing_template_slots: def("object", { of: "list" }),
  error_summary: def("list", { of: { line: req("int"), code: req("string"), message: req("string") } }),
  estimated_seconds_remaining: opt("int"),
  view_backfill_job_id: opt("string"),
  backfill_status: opt("string"),
  backfill_progress_pct: opt("number"),
  created_at: opt("string"),
  started_at: opt("string"),
  completed_at: opt("string"),
  progress: opt("any"),
  stage_work: opt("object", { shape: { key: req("string"), label: req("string"), unit: req("string"), done: req("int"), total: req("int") } }),
};
/** Fields of JOB this service always sends (the documents_* counts and `progress` it leaves to the SDK's defaults). */
const ALWAYS_SENT = Object.keys(JOB).filter((k) => !k.startsWith("documents_") && k !== "progress");

/** Every field the SDK parses, nested maps included, and none of those we send left out. */
export function expectJob(body: Record<string, unknown>): void {
  expectSdkParses(body, JOB);
  for (const k of ALWAYS_SENT) expect(body, `job field ${k}`).toHaveProperty(k);
  for (const counts of Object.values(body.patient_event_type_counts as Record<string, unknown>)) expectSdkParses({ counts }, { counts: req("object", { of: "int" }) });
  for (const slots of Object.values(body.missing_template_slots as Record<string, unknown>)) expectSdkParses({ slots }, { slots: req("list", { of: "string" }) });
}

export const JOB_LIST: Shape = { total: req("int"), jobs: def("list") };

let seq = 0;
/** A value no other test uses. */
export const tag = () => `${process.pid}-${Date.now()}-${++seq}`;
export const patientRecord = (value: string, first = "Ada") => ({ type: "patient", data: { first_name: first, sex: "unknown", timezone: "UTC", external_identifiers: [{ system: "demo", value }] } });
export const symptomRecord = (ref: string, day: number, score: number) => ({
  type: "log",
  data: { event_type: "symptom_report", patient_id: ref, timestamp: `2025-06-0${day}T09:00:00Z`, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] }, idempotency_key: `${ref}-s-${day}` },
});
/** A log record as the SDK's IngestRecord.log builds it for an empty payload: no payload key. */
export const loginRecord = (ref: string, day: number) => ({ type: "log", data: { event_type: "user_login", patient_id: ref, timestamp: `2025-06-0${day}T08:00:00Z` } });

/** The SDK's job calls through `sdk`, each answer checked against its model. */
export function jobCalls(sdk: SdkClient) {
  async function job(id: string) {
    const r = await sdk.get(`/v1/ingestion/jobs/${id}`);
    expect(r.statusCode, r.body).toBe(200);
    expectJob(r.json());
    return r.json();
  }

  /** Polls as the SDK's example does, checking every answer, until the status is one of `statuses`. */
  async function pollUntil(id: string, statuses: string[], seen: string[] = []) {
    for (const end = Date.now() + 30_000; ; ) {
      const j = await job(id);
      if (seen.at(-1) !== j.status) seen.push(j.status);
      if (statuses.includes(j.status) || Date.now() > end) return j;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async function create(body: Record<string, unknown>) {
    const r = await sdk.post("/v1/ingestion/jobs", { require_confirmation: true, ...body });
    expect(r.statusCode, r.body).toBe(201);
    expectJob(r.json());
    return r.json();
  }

  async function patientId(value: string): Promise<string | null> {
    return (await sdk.get("/v1/patients", { system: "demo", value })).json().patients[0]?.id ?? null;
  }
  return { job, pollUntil, create, patientId };
}
