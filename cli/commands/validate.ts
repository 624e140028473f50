import { arg, int, noMoreArgs, type Command } from "../command.js";
import { json } from "../output.js";

export const validateCommand: Command = {
  name: "validate",
  summary: "Check a JSONL or FHIR NDJSON ingestion file offline (exit 0 only when valid)",
  help: `Usage: pss validate FILE [--max-errors N] [--json]

Checks a historical ingestion file without contacting the service: each line must be
{"type":"patient"|"log","data":{...}}; patient rows follow POST /v1/patients, log rows
the log catalog (event_type, patient_id, timestamp, payload). A log's patient_id must be
a patient declared above it in the file (external identifier value, or system|value) or
a service id (pat_...), which cannot be checked offline; any other is unknown_patient.
A file without a single patient or log row is invalid (empty_file, line 0), as a job
would fail it. A file whose first line is a FHIR resource is checked as a job converts
it: each resource (or Bundle entry) must be valid FHIR R4 of a mapped type, and name a
Patient of the file (Patient/<id>, urn:uuid in a Bundle) or a service id.

Exit code: 0 valid, 1 invalid (each bad line is listed; past 1,000, those that would
fail a job first), 2 usage error.

Options:
  --max-errors N     Line errors to print (default 50; --json prints all found)`,
  options: { "max-errors": { type: "string" } },
  async run({ args, values, io }) {
    const file = arg(args, 0, "FILE (the JSONL file to check)");
    noMoreArgs(args, 1, "pss validate checks one FILE; check several with a loop (for f in *.jsonl; do pss validate \"$f\"; done)");
    const max = int(values["max-errors"], "max-errors") ?? 50;
    // Loaded here: compiling the catalog costs ~0.4 s that other commands need not pay.
    const { validateFile } = await import("../../src/ingestion/validate-file.js");
    const r = await validateFile(file);
    if (values.json) {
      io.out(`${json(r)}\n`);
      return r.valid ? 0 : 1;
    }
    const summary = `${r.lines} lines, ${r.patients} patients, ${r.logs} logs`;
    if (r.valid) {
      io.out(`${file}: valid (${summary})\n`);
      return 0;
    }
    for (const e of r.errors.slice(0, max)) io.err(`line ${e.line}: ${e.code}: ${e.message}\n`);
    const shown = Math.min(max, r.errors.length);
    const more = r.errors.length > shown || r.truncated ? ` (${shown} shown${r.truncated ? "; more were found" : ` of ${r.errors.length}`})` : "";
    io.err(`${file}: invalid: ${r.errors.length}${r.truncated ? "+" : ""} line errors${more} (${summary})\n`);
    return 1;
  },
};
