import { derivedPatientId } from "../../../src/ingestion/patient-refs.js";
import { docPieces, purgeStaging, readDoc } from "../../../src/ingestion/staging.js";
import type { StageInput } from "../job-machine.js";
import { rollBackCreated } from "../rollback.js";
import { DOCS, forEachLimited, type PatientDocRow, type RowDocRow, type StageDeps, type StageFn } from "../stage-deps.js";

/**
 * CANCELLING and FAILING: waits for the interrupted stage to stop, drops the staged logs
 * and the job's documents, and with `rollback` removes the patients this job created
 * (never patients it only reused) that hold nothing but the job's own data: one that live
 * writes reached meanwhile is kept (rollback.ts). Runs only before REPLAYING wrote
 * anything to patient state, so removing a created patient removes all the job put there. What the job
 * counts as inserted (logs_processed) is then what reached patient state: none before
 * the replay, what the replay wrote when it failed.
 */
export const cleanupStage: StageFn<StageInput & { rollback: boolean }, void> = async (deps, job, input, signal) => {
  await job.settled();
  await purgeStaging(deps.staging, input.job_id);
  if (input.rollback) {
    // Patients taken out during the review were deleted then.
    const takenOut = new Set(job.record.removed_patients);
    const created = (await createdPatients(deps, input, signal)).filter((id) => !takenOut.has(id));
    const done = await rollBackCreated(deps, input, created, signal, deps.rollbackSettleMs);
    Object.assign(job.record, { patients_rolled_back: done.removed, patients_rollback_kept: done.keptTotal, rollback_kept: done.kept });
  }
  await purgeStaging(deps.staging, input.job_id, true);
  job.record.logs_processed = job.record.logs_replayed;
  await job.save();
};

/**
 * The patients this job created: from its patients document once INSERTING_PATIENTS
 * finished, else (cancelled midway) the patient rows whose derived id exists.
 */
async function createdPatients(deps: StageDeps, input: StageInput, signal: AbortSignal): Promise<string[]> {
  const placed = await readDoc<PatientDocRow>(deps.staging, input.job_id, DOCS.patients);
  if (placed) return placed.filter((r) => r[2] === 1).map((r) => r[1]);
  const out: string[] = [];
  for await (const piece of docPieces<RowDocRow>(deps.staging, input.job_id, DOCS.rows, signal)) {
    await forEachLimited(piece, 16, signal, async ([line]) => {
      const id = derivedPatientId(input.job_id, line);
      if (await deps.patients.get(input.project_id, id)) out.push(id);
    });
  }
  return out;
}
