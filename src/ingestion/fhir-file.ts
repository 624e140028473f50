import { FhirRows, looksLikeFhir, type FhirLineError } from "./fhir-rows.js";
import { LineInts } from "./line-targets.js";
import { LineTooLongError, lineBatches, tooLongMessage, type LineBatch } from "./lines.js";
import { MAX_PATIENT_DETAILS } from "./patient-details.js";
import type { UploadStore } from "./uploads.js";

/** What converting a FHIR file gave: where each row came from, and the file's own size in lines. */
export interface FhirConversion {
  /** Row n of the converted file came from line `lineOf.get(n)` of the uploaded one. */
  lineOf: LineInts;
  /** Lines of the uploaded file. */
  lines: number;
  /** Resources skipped for their own faults (unmapped, invalid): counted as invalid logs. */
  skipped: number;
  /** Of those, how many each patient reference named (see FhirTally.skippedFor). */
  skippedFor: Map<string, number>;
  bytes: number;
}

/** The name of a job's converted rows in the object store: under `inline/`, so a project's erasure takes it. */
export const rowsObjectOf = (projectId: string, jobId: string): string => `inline/${projectId}/${jobId}.fhir-rows.jsonl`;

/** "fhir" when the file's first non-blank line is a FHIR resource, else "jsonl". */
export async function sniffFormat(uploads: UploadStore, object: string, signal: AbortSignal): Promise<"fhir" | "jsonl"> {
  try {
    for await (const batch of lineBatches(uploads.read(object, signal))) {
      const first = batch.lines.find((l) => l.trim() !== "");
      if (first !== undefined) return looksLikeFhir(first) ? "fhir" : "jsonl";
    }
  } catch (err) {
    // A first line too long for a row is the validation's to report.
    if (!(err instanceof LineTooLongError)) throw err;
  }
  return "jsonl";
}

/** What a conversion counts as it goes. */
export interface FhirTally {
  /** Lines of the FHIR file read so far. */
  lines: number;
  /** Resources skipped for their own faults (unmapped, invalid): counted as invalid logs. */
  skipped: number;
  /**
   * When given, skipped resources by the patient reference they name, for the first
   * MAX_PATIENT_DETAILS references (the job's per-patient counts go no further).
   */
  skippedFor?: Map<string, number>;
}

/**
 * A FHIR file's rows (src/ingestion/fhir-rows.ts) as batches numbered by row, made from
 * two reads of the file (`read` opens one, going on past lines too long, which pass 2
 * reports): its Patients first, then everything else.
 * `lineOf` learns each row's line as it is made; `onError` gets each line's problems.
 */
export async function* fhirRowBatches(
  read: () => AsyncIterable<LineBatch>,
  lineOf: LineInts,
  tally: FhirTally,
  onError: (line: number, e: FhirLineError) => void,
  onProgress?: (fraction: number, bytesRead: number) => void,
): AsyncGenerator<LineBatch> {
  const maker = new FhirRows();
  let rows = 0;
  for (const pass of [1, 2] as const) {
    for await (const batch of read()) {
      const first = rows + 1;
      const lines: string[] = [];
      batch.lines.forEach((t, i) => {
        const line = batch.first + i;
        if (batch.tooLong?.includes(line)) {
          if (pass === 2) onError(line, { code: "line_too_long", message: tooLongMessage(line), structural: true });
          return;
        }
        const o = pass === 1 ? maker.patientRows(t) : maker.logRows(t, line);
        for (const r of o.rows) {
          lineOf.set(++rows, line);
          lines.push(r);
        }
        for (const e of o.errors) onError(line, e);
        tally.skipped += o.skipped;
        if (tally.skippedFor) countSkips(tally.skippedFor, o.skippedFor);
      });
      tally.lines = batch.first + batch.lines.length - 1;
      onProgress?.(pass, batch.bytesRead);
      if (lines.length > 0) yield { first, lines, bytesRead: batch.bytesRead };
    }
  }
}

function countSkips(into: Map<string, number>, refs: readonly string[]): void {
  for (const ref of refs) {
    const n = into.get(ref);
    if (n !== undefined) into.set(ref, n + 1);
    else if (into.size < MAX_PATIENT_DETAILS) into.set(ref, 1);
  }
}

/**
 * Converts the uploaded FHIR file into JSONL rows, streamed into the object store as they
 * are made: memory holds a chunk and the file's Patients (their ids and identifiers),
 * whatever the file's size. `onError` gets each line's problems, by the uploaded file's
 * line; `onProgress` the fraction of the work done.
 */
export async function convertFhirFile(
  uploads: UploadStore,
  source: { object: string; bytes: number },
  target: string,
  signal: AbortSignal,
  onError: (line: number, e: FhirLineError) => void,
  onProgress: (fraction: number) => void,
): Promise<FhirConversion> {
  const lineOf = new LineInts();
  const skippedFor = new Map<string, number>();
  const tally: FhirTally = { lines: 0, skipped: 0, skippedFor };
  const encoder = new TextEncoder();
  const progress = (pass: number, bytesRead: number) => onProgress((pass - 1) / 2 + (source.bytes > 0 ? bytesRead / source.bytes : 1) / 2);
  async function* converted(): AsyncGenerator<Uint8Array> {
    for await (const b of fhirRowBatches(() => lineBatches(uploads.read(source.object, signal), true), lineOf, tally, onError, progress)) {
      yield encoder.encode(`${b.lines.join("\n")}\n`);
    }
  }
  // A re-run (after a restart) writes the object again from scratch.
  await uploads.delete(target);
  const written = await uploads.write(target, converted());
  return { lineOf, lines: tally.lines, skipped: tally.skipped, skippedFor, bytes: written.size };
}
