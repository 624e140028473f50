import { FhirRows, looksLikeFhir, type FhirLineError } from "./fhir-rows.js";
import { LineInts } from "./line-targets.js";
import { LineTooLongError, lineBatches } from "./lines.js";
import type { UploadStore } from "./uploads.js";

/** What converting a FHIR file gave: where each row came from, and the file's own size in lines. */
export interface FhirConversion {
  /** Row n of the converted file came from line `lineOf.get(n)` of the uploaded one. */
  lineOf: LineInts;
  /** Lines of the uploaded file. */
  lines: number;
  /** Resources skipped for their own faults (unmapped, invalid): counted as invalid logs. */
  skipped: number;
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

/**
 * Converts the uploaded FHIR file into JSONL rows (src/ingestion/fhir-rows.ts), streamed
 * into the object store as it is produced: memory holds a chunk and the file's Patients
 * (their ids and identifiers), whatever the file's size. `onError` gets each line's
 * problems, by the uploaded file's line; `onProgress` the fraction of the work done.
 */
export async function convertFhirFile(
  uploads: UploadStore,
  source: { object: string; bytes: number },
  target: string,
  signal: AbortSignal,
  onError: (line: number, e: FhirLineError) => void,
  onProgress: (fraction: number) => void,
): Promise<FhirConversion> {
  const maker = new FhirRows();
  const lineOf = new LineInts();
  let rows = 0;
  let lines = 0;
  let skipped = 0;
  const encoder = new TextEncoder();
  async function* converted(): AsyncGenerator<Uint8Array> {
    for (const pass of [1, 2] as const) {
      try {
        for await (const batch of lineBatches(uploads.read(source.object, signal))) {
          const text: string[] = [];
          batch.lines.forEach((t, i) => {
            const line = batch.first + i;
            const o = pass === 1 ? maker.patientRows(t) : maker.logRows(t, line);
            for (const r of o.rows) {
              lineOf.set(++rows, line);
              text.push(r);
            }
            for (const e of o.errors) onError(line, e);
            skipped += o.skipped;
          });
          lines = batch.first + batch.lines.length - 1;
          onProgress((pass - 1) / 2 + (source.bytes > 0 ? batch.bytesRead / source.bytes : 1) / 2);
          if (text.length > 0) yield encoder.encode(`${text.join("\n")}\n`);
        }
      } catch (err) {
        // As in a JSONL file, a line too long ends the reading; reported once, by pass 2.
        if (!(err instanceof LineTooLongError)) throw err;
        if (pass === 2) onError(err.line, { code: "line_too_long", message: err.message, structural: true });
      }
    }
  }
  // A re-run (after a restart) writes the object again from scratch.
  await uploads.delete(target);
  const written = await uploads.write(target, converted());
  return { lineOf, lines, skipped, bytes: written.size };
}
