import { newPatient } from "../../../src/control/patient-records.js";
import type { ExternalIdentifier } from "../../../src/control/patients.js";
import { isAppError } from "../../../src/errors.js";
import { checkPatient, type PatientInput } from "../../../src/ingestion/file-rules.js";
import { derivedPatientId } from "../../../src/ingestion/patient-refs.js";
import { docPieces, DocWriter } from "../../../src/ingestion/staging.js";
import type { StageInput } from "../job-machine.js";
import { DOCS, forEachLimited, throwIfAborted, type PatientDocRow, type RowDocRow, type StageDeps, type StageFn } from "../stage-deps.js";

interface Row {
  line: number;
  input: PatientInput;
  identifiers: ExternalIdentifier[];
}

/** Patients created at once: each is two KV writes, mostly waiting on the round trip. */
const CONCURRENCY = 64;

/**
 * INSERTING_PATIENTS: creates the patient rows VALIDATING kept. A row whose external
 * identifier an existing patient holds reuses that patient (processed, not created).
 * New patients get an id derived from the job and the line, so a re-run after a restart
 * recognises what it created before (and does not create it twice), and a rollback can
 * remove exactly those. Writes where each row went: the "patients" document.
 */
export const insertPatientsStage: StageFn<StageInput, void> = async (deps, job, input, signal) => {
  const r = job.record;
  const rerun = (r.stage_runs.INSERTING_PATIENTS = (r.stage_runs.INSERTING_PATIENTS ?? 0) + 1) > 1;
  Object.assign(r, { patients_processed: 0, patients_created: 0, stage_fraction: 0 });
  await job.save();
  const out = await new DocWriter<PatientDocRow>(deps.staging, input.job_id, DOCS.patients).begin();
  const now = new Date().toISOString();
  for await (const piece of docPieces<RowDocRow>(deps.staging, input.job_id, DOCS.rows, signal)) {
    const rows: Row[] = [];
    for (const [line, data] of piece) {
      const p = checkPatient(data);
      if (p.ok) rows.push({ line, input: p.input, identifiers: p.identifiers });
    }
    const placed: PatientDocRow[] = [];
    await forEachLimited(rows, CONCURRENCY, signal, async (row) => {
      const p = await place(deps, input, row, now, rerun);
      placed.push(p);
      r.patients_processed++;
      if (p[2] === 1) r.patients_created++;
    });
    for (const p of placed) await out.add(p);
    r.stage_fraction = r.patients_total > 0 ? r.patients_processed / r.patients_total : 1;
    job.touch();
    throwIfAborted(signal);
  }
  await out.end();
  r.stage_fraction = 1;
  await job.save();
};

async function place(deps: StageDeps, input: StageInput, row: Row, now: string, rerun: boolean): Promise<PatientDocRow> {
  const derived = derivedPatientId(input.job_id, row.line);
  // A re-run first looks for what the last run made: creating it again would collide.
  if (rerun && (await deps.patients.get(input.project_id, derived))) return [row.line, derived, 1];
  try {
    await deps.patients.create({ ...newPatient(row.input, input, now), id: derived });
    return [row.line, derived, 1];
  } catch (err) {
    // An identifier belongs to an existing patient (or someone created one meanwhile): reuse it.
    if (!isAppError(err) || err.code !== "conflict") throw err;
    for (const e of row.identifiers) {
      const p = await deps.patients.findByExternalId(input.project_id, e);
      if (p) return [row.line, p.id, p.id === derived ? 1 : 0];
    }
    throw err;
  }
}
