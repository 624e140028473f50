import { addLineError } from "../../../src/ingestion/job-record.js";
import { LineTargets } from "../../../src/ingestion/line-targets.js";
import { settlePatientDetails, type TargetTypeRow } from "../../../src/ingestion/patient-details.js";
import { lineBatches } from "../../../src/ingestion/lines.js";
import { bucketCount, purgeStaging, readBinaryDoc, readDoc, StagingWriter, writeDoc } from "../../../src/ingestion/staging.js";
import type { StageInput } from "../job-machine.js";
import { rowSource } from "../row-source.js";
import { DOCS, PermanentError, retryStorage, throwIfAborted, type LiveJob, type PatientDocRow, type StageDeps, type StageFn } from "../stage-deps.js";

/**
 * INSERTING_LOGS: reads the file again and stages every valid log, as uploaded, into
 * its patient's staging bucket, without touching patient state. Which patient a line
 * feeds was settled by VALIDATING (LineTargets) and INSERTING_PATIENTS (the patients
 * document), so no line is parsed here. Logs skipped for their payload have no target.
 * Staged logs count as processed (inserted): the review shows how many went in. Ends by
 * writing the list of patients with staged logs and the per-patient counts. A re-run starts from an empty
 * staging area, so it never stages a line twice: after a storage failure the stage just
 * runs again, for up to StageDeps.storageRetryMs.
 */
export const stageLogsStage: StageFn<StageInput, void> = (deps, job, input, signal) => {
  const r = job.record;
  const listed = r.error_summary.length;
  const truncated = r.error_summary_truncated;
  return retryStorage(() => {
    // What a failed run listed goes: the next lists it again.
    r.error_summary.length = listed;
    r.error_summary_truncated = truncated;
    return stageLogs(deps, job, input, signal);
  }, signal, deps.storageRetryMs);
};

async function stageLogs(deps: StageDeps, job: LiveJob, input: StageInput, signal: AbortSignal): Promise<void> {
  const r = job.record;
  Object.assign(r, { logs_staged: 0, logs_processed: 0, logs_failed: r.logs_invalid, stage_fraction: 0 });
  await purgeStaging(deps.staging, input.job_id);
  const bytes = await readBinaryDoc(deps.staging, input.job_id, DOCS.targets);
  const existing = await readDoc<string>(deps.staging, input.job_id, DOCS.existing);
  const placed = await readDoc<PatientDocRow>(deps.staging, input.job_id, DOCS.patients);
  if (!bytes || !existing || !placed) throw new PermanentError("the job's validation results are missing; it must be started again");
  const targets = LineTargets.fromBytes(bytes, existing);
  const idOfLine = new Map<number, string>(placed.map(([line, id]) => [line, id]));
  r.replay_buckets = bucketCount(r.source.bytes, deps.bucketBytes);
  const writer = new StagingWriter(deps.staging, input.job_id, r.replay_buckets);
  // A FHIR file's converted rows: a row's number is its line here, the uploaded file's in errors.
  const rows = await rowSource(deps, job);
  for await (const batch of lineBatches(deps.uploads.read(rows.object, signal))) {
    for (let i = 0; i < batch.lines.length; i++) {
      const line = batch.first + i;
      const t = targets.get(line);
      if (t === 0) continue;
      const patientId = t > 0 ? idOfLine.get(t) : targets.existing[-t - 1];
      if (patientId === undefined) {
        r.logs_failed++;
        addLineError(r, { line: rows.lineOf(line), code: "patient_not_found", message: `the patient row on line ${rows.lineOf(t)} was not created` });
        continue;
      }
      const wait = writer.add(patientId, line, batch.lines[i]!);
      if (wait) await wait;
      r.logs_staged++;
    }
    r.logs_processed = r.logs_staged;
    r.stage_fraction = rows.bytes > 0 ? batch.bytesRead / rows.bytes : 1;
    job.touch();
    throwIfAborted(signal);
  }
  await writer.flush();
  await writeDoc(deps.staging, input.job_id, DOCS.replay, [...writer.counts.keys()].sort());
  // A job VALIDATING left no counts for (an earlier build's) has no per-patient maps.
  const typeRows = (await readDoc<TargetTypeRow>(deps.staging, input.job_id, DOCS.typeCounts)) ?? [];
  settlePatientDetails(r, typeRows, (t) => (typeof t === "number" ? idOfLine.get(t) : t), writer.counts);
  r.logs_processed = r.logs_staged;
  r.stage_fraction = 1;
  r.replay = null;
  await job.save();
}
