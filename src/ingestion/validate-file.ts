import { createReadStream } from "node:fs";
import { FileChecker } from "./file-rules.js";
import { fhirRowBatches, type FhirTally } from "./fhir-file.js";
import { looksLikeFhir } from "./fhir-rows.js";
import { LineInts } from "./line-targets.js";
import { LineTooLongError, lineBatches, tooLongMessage } from "./lines.js";
import type { LineError } from "./job-record.js";
import { LineErrorSummary } from "./line-errors.js";

export interface FileValidation {
  /** True when a job would take the file with no line error at all. */
  valid: boolean;
  /** Lines read (blank ones included). */
  lines: number;
  patients: number;
  logs: number;
  /**
   * At most 1,000, in line order; `truncated` says more were found, and then those that
   * would fail a job come first.
   */
  errors: LineError[];
  truncated: boolean;
  /** Line errors that would fail a job (the others only skip their log). */
  structural_errors: number;
  logs_by_event_type: Record<string, number>;
}

/** What a service patient id looks like (`pat_` + ULID); offline, such ids are trusted. */
const SERVICE_ID = /^pat_[0-9A-Za-z]{6,60}$/;

/**
 * Checks a JSONL ingestion file offline, with the catalog and patient rules the service
 * applies, streaming it (any size, constant memory). Without a server, a log may name a
 * patient only as declared above it in the file, or by a service id (`pat_...`), which
 * is accepted unchecked; any other reference is reported as `unknown_patient`, the code
 * a job would give if no existing patient holds it.
 */
export async function validateJsonlFile(path: string): Promise<FileValidation> {
  return validateFile(path, "jsonl");
}

const read = (path: string, goOn = false) => lineBatches(createReadStream(path, { highWaterMark: 256 * 1024 }), goOn);

/** "fhir" when the file's first non-blank line is a FHIR resource (as a job sniffs it), else "jsonl". */
export async function formatOf(path: string): Promise<"fhir" | "jsonl"> {
  try {
    for await (const batch of read(path)) {
      const first = batch.lines.find((l) => l.trim() !== "");
      if (first !== undefined) return looksLikeFhir(first) ? "fhir" : "jsonl";
    }
  } catch (err) {
    if (!(err instanceof LineTooLongError)) throw err;
  }
  return "jsonl";
}

/** Checks an ingestion file offline: JSONL rows, or FHIR resources and Bundles (`pss validate`). */
export async function validateFile(path: string, format?: "fhir" | "jsonl"): Promise<FileValidation> {
  const fhir = (format ?? (await formatOf(path))) === "fhir";
  const checker = new FileChecker({
    resolve: (ref) => (SERVICE_ID.test(ref) ? ref : null),
  });
  const errors = new LineErrorSummary();
  let lines = 0;
  const record = (e: LineError, isStructural: boolean) => errors.add(e, isStructural);
  const lineOf = new LineInts();
  const tally: FhirTally = { lines: 0, skipped: 0 };
  // A FHIR file is checked as the rows a job converts it to; errors name its own lines.
  const at = (row: number) => (fhir ? lineOf.get(row) : row);
  const batches = fhir ? fhirRowBatches(() => read(path, true), lineOf, tally, (line, e) => record({ line, code: e.code, message: e.message }, e.structural)) : read(path, true);
  for await (const batch of batches) {
    for (let i = 0; i < batch.lines.length; i++) {
      const line = at(batch.first + i);
      if (batch.tooLong?.includes(batch.first + i)) {
        record({ line, code: "line_too_long", message: tooLongMessage(line) }, true);
        continue;
      }
      const r = checker.check(batch.lines[i]!, batch.first + i);
      const out = r instanceof Promise ? await r : r;
      if (out.kind === "error") {
        if (out.code === "unknown_patient") {
          // Offline, an existing patient's identifier cannot be looked up: the message says so.
          const message = `${out.message} (offline, only patients declared in the file and service ids pat_... can be checked)`;
          record({ line, code: out.code, message }, true);
        } else record({ line, code: out.code, message: out.message }, out.structural);
      }
    }
    lines = batch.first + batch.lines.length - 1;
  }
  if (fhir) lines = tally.lines;
  // As the job's VALIDATING stage: a file without a single row fails, reported at line 0.
  if (checker.patients === 0 && checker.logs === 0 && errors.failingTotal === 0 && tally.skipped === 0) {
    record({ line: 0, code: "empty_file", message: "the file holds no patient or log row" }, true);
  }
  return {
    valid: errors.total === 0,
    lines,
    patients: checker.patients,
    logs: checker.logs + tally.skipped,
    errors: errors.list(),
    truncated: errors.truncated,
    structural_errors: errors.failingTotal,
    logs_by_event_type: checker.byType,
  };
}
