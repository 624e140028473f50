import { FileChecker } from "../../../src/ingestion/file-rules.js";
import { LineErrorSummary } from "../../../src/ingestion/line-errors.js";
import { lineBatches, tooLongMessage } from "../../../src/ingestion/lines.js";
import { LineTargets } from "../../../src/ingestion/line-targets.js";
import { ExistingPatientResolver } from "../../../src/ingestion/patient-refs.js";
import { TargetTypeCounts } from "../../../src/ingestion/patient-details.js";
import { DocWriter, writeBinaryDoc, writeDoc } from "../../../src/ingestion/staging.js";
import { prepareRows } from "../row-source.js";
import { DOCS, throwIfAborted, type RowDocRow, type StageFn } from "../stage-deps.js";
import type { StageInput } from "../job-machine.js";

/**
 * VALIDATING: streams the file once and judges every line (see src/ingestion/file-rules.ts).
 * Payload errors of single logs are recorded and will be skipped; anything structural
 * (bad JSON, unknown row type, a bad patient row, an undeclared patient) is counted and
 * fails the job, after the whole file was read so that error_summary lists every line
 * (those failing it first, when the summary is capped: src/ingestion/line-errors.ts).
 * It also records what later stages need, so they never parse the file again: the
 * valid patient rows, for every log line the patient it feeds (LineTargets), and the
 * first patients' logs by type (the job's per-patient counts).
 * A FHIR file is first converted to rows (actors/ingestion/row-source.ts), which are then
 * judged the same way; errors name the uploaded file's lines.
 * Restartable: a re-run starts afresh.
 */
export const validateStage: StageFn<StageInput, { structural_errors: number }> = async (deps, job, input, signal) => {
  const r = job.record;
  Object.assign(r, { lines_validated: 0, lines_total: 0, error_summary: [], error_summary_truncated: false, logs_total: 0, patients_total: 0, logs_invalid: 0, logs_failed: 0, stage_fraction: 0 });
  r.logs_by_event_type = {};
  const errors = new LineErrorSummary();
  const prepared = await prepareRows(deps, job, errors, signal);
  const { lineOf } = prepared.rows;
  const fhir = r.source.format === "fhir";
  const checker = new FileChecker(new ExistingPatientResolver(deps.patients, input.project_id));
  const rows = await new DocWriter<RowDocRow>(deps.staging, input.job_id, DOCS.rows).begin();
  const targets = new LineTargets();
  const typeCounts = new TargetTypeCounts();
  let structural = prepared.structural;
  let skipped = prepared.skipped;
  let lines = 0;
  for await (const batch of lineBatches(deps.uploads.read(prepared.rows.object, signal), true)) {
    for (let i = 0; i < batch.lines.length; i++) {
      const line = batch.first + i;
      if (batch.tooLong?.includes(line)) {
        structural++;
        errors.add({ line: lineOf(line), code: "line_too_long", message: `${fhir ? "its rows: " : ""}${tooLongMessage(line)}` }, true);
        continue;
      }
      const res = checker.check(batch.lines[i]!, line);
      const out = res instanceof Promise ? await res : res;
      if (out.kind === "log") {
        typeCounts.add(out.target, out.log_type);
        if (typeof out.target === "number") targets.set(line, out.target);
        else targets.setExisting(line, out.target);
        continue;
      }
      if (out.kind === "patient") await rows.add([line, out.data]);
      if (out.kind !== "error") continue;
      if (out.structural) structural++;
      else skipped++;
      if (!out.structural && out.target !== undefined) typeCounts.addInvalid(out.target);
      errors.add({ line: lineOf(line), code: out.code, message: out.message }, out.structural);
    }
    lines = batch.first + batch.lines.length - 1;
    r.lines_validated = lineOf(lines);
    r.patients_total = checker.patients;
    r.logs_total = checker.logs + prepared.skipped;
    const done = prepared.rows.bytes > 0 ? batch.bytesRead / prepared.rows.bytes : 1;
    r.stage_fraction = fhir ? 0.5 + done / 2 : done;
    errors.copyTo(r);
    job.touch();
    throwIfAborted(signal);
  }
  // Resources skipped at conversion, counted for the patient they name once the file's patients are all known.
  for (const [ref, n] of prepared.skippedFor) {
    const target = await checker.targetOf(ref);
    if (target !== undefined) typeCounts.addInvalid(target, n);
  }
  if (checker.patients === 0 && checker.logs === 0 && structural === 0 && skipped === 0) {
    structural++;
    errors.add({ line: 0, code: "empty_file", message: "the file holds no patient or log row" }, true);
  }
  errors.copyTo(r);
  await rows.end();
  await writeBinaryDoc(deps.staging, input.job_id, DOCS.targets, targets.toBytes());
  await writeDoc(deps.staging, input.job_id, DOCS.existing, targets.existing);
  await writeDoc(deps.staging, input.job_id, DOCS.typeCounts, typeCounts.rows());
  // A FHIR file counts its own lines; a resource skipped for its faults is one invalid log.
  const fileLines = fhir ? prepared.lines : lines;
  Object.assign(r, { lines_total: fileLines, lines_validated: fileLines, patients_total: checker.patients, logs_total: checker.logs + prepared.skipped, logs_invalid: skipped, logs_failed: skipped, stage_fraction: 1 });
  r.logs_by_event_type = checker.byType;
  await job.save();
  return { structural_errors: structural };
};
