import { convertFhirFile, rowsObjectOf, sniffFormat } from "../../src/ingestion/fhir-file.js";
import type { LineErrorSummary } from "../../src/ingestion/line-errors.js";
import { LineInts } from "../../src/ingestion/line-targets.js";
import { readBinaryDoc, writeBinaryDoc } from "../../src/ingestion/staging.js";
import { DOCS, PermanentError, type LiveJob, type StageDeps } from "./stage-deps.js";

/**
 * The JSONL rows a job's stages read, and which line of the uploaded file each row is:
 * the file itself (row n is line n), or the rows VALIDATING converted a FHIR file to.
 */
export interface RowSource {
  object: string;
  bytes: number;
  lineOf: (row: number) => number;
}

const itself = (object: string, bytes: number): RowSource => ({ object, bytes, lineOf: (n) => n });

/** The job's rows as INSERTING_LOGS and REPLAYING read them, once VALIDATING has made them. */
export async function rowSource(deps: StageDeps, job: LiveJob): Promise<RowSource> {
  const s = job.record.source;
  if (!s.rows) return itself(s.object, s.bytes);
  const bytes = await readBinaryDoc(deps.staging, job.record.job_id, DOCS.fhirLines);
  if (!bytes) throw new PermanentError("the job's FHIR line map is missing; it must be started again");
  const map = LineInts.fromBytes(bytes);
  return { object: s.rows.object, bytes: s.rows.bytes, lineOf: (n) => map.get(n) };
}

/** What VALIDATING's FHIR conversion found before the rows are checked. */
export interface Prepared {
  rows: RowSource;
  /** Line errors that fail the job, and resources skipped for their own faults. */
  structural: number;
  skipped: number;
  /** Skipped resources by the patient reference they name (none for a JSONL file). */
  skippedFor: ReadonlyMap<string, number>;
  /** Lines of the uploaded file (0: not known before the rows are read, a JSONL file). */
  lines: number;
}

/**
 * VALIDATING's first step: the file's format (sniffed from its first line when the job
 * was not told), and a FHIR file converted to rows, its line errors recorded by the
 * uploaded file's lines. The conversion is the first half of the stage's progress.
 */
export async function prepareRows(deps: StageDeps, job: LiveJob, errors: LineErrorSummary, signal: AbortSignal): Promise<Prepared> {
  const r = job.record;
  const s = r.source;
  s.format ??= await sniffFormat(deps.uploads, s.object, signal);
  if (s.format !== "fhir") return { rows: itself(s.object, s.bytes), structural: 0, skipped: 0, skippedFor: new Map(), lines: 0 };
  let structural = 0;
  const target = rowsObjectOf(r.project_id, r.job_id);
  const c = await convertFhirFile(
    deps.uploads,
    s,
    target,
    signal,
    (line, e) => {
      if (e.structural) structural++;
      errors.add({ line, code: e.code, message: e.message }, e.structural);
    },
    (fraction) => {
      r.stage_fraction = fraction / 2;
      errors.copyTo(r);
      job.touch();
    },
  );
  errors.copyTo(r);
  s.rows = { object: target, bytes: c.bytes };
  await writeBinaryDoc(deps.staging, r.job_id, DOCS.fhirLines, c.lineOf.toBytes());
  await job.save();
  const map = c.lineOf;
  return { rows: { object: target, bytes: c.bytes, lineOf: (n) => map.get(n) }, structural, skipped: c.skipped, skippedFor: c.skippedFor, lines: c.lines };
}
