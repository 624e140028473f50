import { derivedPatientId } from "../../../src/ingestion/patient-refs.js";
import { docPieces, purgeStaging, readDoc } from "../../../src/ingestion/staging.js";
import type { StageInput } from "../job-machine.js";
import { rollBackCreated, type RollbackOutcome } from "../rollback.js";
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
  const r = job.record;
  // Taken first: from its first await on, this stage is part of the work settled() waits for.
  const interrupted = job.settled();
  // Saved before anything is removed: a re-run then knows the created patients it finds gone were its own.
  const rerun = (r.stage_runs.CLEANUP = (r.stage_runs.CLEANUP ?? 0) + 1) > 1;
  await job.save();
  await interrupted;
  await purgeStaging(deps.staging, input.job_id);
  if (input.rollback) {
    // Patients taken out during the review were deleted then.
    const takenOut = new Set(r.removed_patients);
    const created = (await createdPatients(deps, input, signal)).filter((id) => !takenOut.has(id));
    const removed = (o: RollbackOutcome) => o.removed + (rerun ? o.gone : 0);
    if (r.cancelling) r.status_message = `cancelling: rolling back ${created.length} created patient(s)`;
    // Shown as it goes; a re-run's counts never drop below what the interrupted run showed.
    const shown = { removed: r.patients_rolled_back, kept: r.patients_rollback_kept };
    const done = await rollBackCreated(deps, input, created, signal, deps.rollbackSettleMs, (o) => {
      r.patients_rolled_back = Math.max(shown.removed, removed(o));
      r.patients_rollback_kept = Math.max(shown.kept, o.keptTotal);
      job.touch();
    });
    Object.assign(r, { patients_rolled_back: removed(done), patients_rollback_kept: done.keptTotal, rollback_kept: done.kept });
  }
  await purgeStaging(deps.staging, input.job_id, true);
  r.logs_processed = r.logs_replayed;
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
