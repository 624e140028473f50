import { resolveLogType } from "../../catalog/index.js";
import { AppError } from "../../src/errors.js";
import type { JobRecord } from "../../src/ingestion/job-record.js";
import { forgetPatient } from "../../src/ingestion/patient-details.js";
import { PatientLog } from "../../src/logs/patient-log.js";
import { bucketOf, lastSeqOf, readBucket, readDoc, StagingWriter, type StagedLine } from "../../src/ingestion/staging.js";
import { ROLLBACK_SETTLE_MS } from "./rollback.js";
import { DOCS, type LiveJob, type PatientDocRow, type StageDeps } from "./stage-deps.js";

/**
 * Takes a patient out of a job awaiting confirmation (DELETE /v1/ingestion/jobs/{id}/patients/{pid}):
 * its staged logs are dropped and never replayed, the job's counts lose them, and a patient
 * this job created is deleted (a patient it only reused stays). The runner calls it with
 * no other control operation of the job under way (a confirm must not read a bucket while
 * it is rewritten).
 *
 * Safe to run again after a failure or a lost answer: the removal is saved in the record
 * (replay and backfill pass the patient by from then on) before the staging bucket is
 * rewritten without the patient's lines and the patient deleted, and a second run redoes
 * only those two.
 */
export async function removePatient(deps: StageDeps, job: LiveJob, patientId: string): Promise<void> {
  const r = job.record;
  const { staging } = deps;
  const rows = ((await readDoc<PatientDocRow>(staging, r.job_id, DOCS.patients)) ?? []).filter(([, id]) => id === patientId);
  const bucket = bucketOf(patientId, Math.max(1, r.replay_buckets));
  const subject = staging.names.stagingSubject(r.job_id, String(bucket));
  const last = await lastSeqOf(staging.jsm, staging.names.stagingStream, subject);
  // By line: a line staged twice (a run retried, a rewrite interrupted) counts once.
  const mine = new Map<number, StagedLine>();
  const kept = new Map<number, StagedLine>();
  if (last > 0) {
    for await (const part of readBucket(staging, r.job_id, bucket)) for (const e of part) (e.patient === patientId ? mine : kept).set(e.line, e);
  }
  const already = r.removed_patients.includes(patientId);
  if (!already && rows.length === 0 && mine.size === 0) {
    throw new AppError("not_found", `patient ${patientId} is not part of ingestion job ${r.job_id}: no patient row of the job placed it and none of its logs names it`);
  }
  if (!already) {
    takeOut(r, patientId, rows, [...mine.values()]);
    await job.save();
  }
  if (mine.size > 0) {
    // The rest of the bucket is published again before the old messages go, so a failure
    // in between leaves every other line staged (replay writes a line staged twice once).
    const writer = new StagingWriter(staging, r.job_id, r.replay_buckets);
    for (const e of kept.values()) await writer.add(e.patient, e.line, e.text);
    await writer.flush();
    await staging.jsm.streams.purge(staging.names.stagingStream, { filter: subject, seq: last + 1 });
  }
  if (rows.some(([, , created]) => created === 1)) await deleteCreatedPatient(deps, r, patientId);
}

/** The job's counts without the patient: its rows and staged logs are no longer part of the job. */
function takeOut(r: JobRecord, patientId: string, rows: PatientDocRow[], lines: StagedLine[]): void {
  const n = lines.length;
  r.removed_patients.push(patientId);
  r.patients_removed++;
  r.patients_total -= rows.length;
  r.patients_processed -= rows.length;
  r.patients_created -= rows.filter(([, , created]) => created === 1).length;
  Object.assign(r, { logs_total: r.logs_total - n, logs_staged: r.logs_staged - n, logs_processed: r.logs_processed - n, logs_removed: r.logs_removed + n });
  for (const e of lines) {
    const data = (JSON.parse(e.text) as { data: Record<string, unknown> }).data;
    const name = data.log_type ?? data.event_type;
    const type = typeof name === "string" ? resolveLogType(name) : undefined;
    if (type === undefined || r.logs_by_event_type[type] === undefined) continue;
    if (--r.logs_by_event_type[type] <= 0) delete r.logs_by_event_type[type];
  }
  forgetPatient(r, patientId);
}

/**
 * A patient the job created has no history but what the job staged, so it is erased, as a
 * rollback erases it. Logs sent to it since the job created it are not the job's: then
 * they are kept and the patient stays deleted as DELETE /v1/patients/{id} leaves it (soft).
 * Deleted first and erased only after the rollback's settle time (rollback.ts): from the
 * soft delete on, writes find no active patient, and one that found it active just before
 * lands in that time and keeps it. What remains is rollback.ts's last window: a write
 * admitted before the soft delete and published only after the second look.
 */
async function deleteCreatedPatient(deps: StageDeps, r: JobRecord, patientId: string): Promise<void> {
  const p = await deps.patients.get(r.project_id, patientId);
  if (!p) return;
  if (p.status === "active") {
    const now = new Date().toISOString();
    await deps.patients.modify(r.project_id, patientId, (cur) => (cur.status === "active" ? { ...cur, status: "deleted", updated_at: now } : undefined));
    await deps.patients.releaseIdentifiers(r.project_id, p.external_identifiers, patientId);
    await new Promise((res) => setTimeout(res, deps.rollbackSettleMs ?? ROLLBACK_SETTLE_MS));
  }
  const logs = await new PatientLog(deps.staging).lastSeq({ organization_id: r.organization_id, project_id: r.project_id, patient_id: patientId });
  if (logs > 0) return;
  await deps.stateStore.erase(r.project_id, patientId);
  await deps.patients.erase(r.project_id, patientId);
}
