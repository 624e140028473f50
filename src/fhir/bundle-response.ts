import type { BundleEntry, OperationOutcomeIssue } from "@medplum/fhirtypes";
import type { BatchAnswer } from "../logs/log-writer.js";

/** Why an entry was not stored, located in the entry's resource. */
export interface EntryFailure {
  status: "400 Bad Request" | "404 Not Found" | "409 Conflict" | "422 Unprocessable Entity" | "503 Service Unavailable";
  code: string;
  message: string;
  path: (string | number)[];
}

/** A FHIRPath to an element of entry `i`'s resource, as OperationOutcome.issue.expression takes it. */
export function expressionOf(i: number, path: (string | number)[]): string {
  let out = `Bundle.entry[${i}].resource`;
  for (const p of path) out += typeof p === "number" ? `[${p}]` : `.${p}`;
  return out;
}

export function failedEntry(i: number, f: EntryFailure): BundleEntry {
  const issue: OperationOutcomeIssue = {
    severity: "error",
    code: f.status.startsWith("404") ? "not-found" : f.status.startsWith("409") ? "conflict" : f.status.startsWith("503") ? "transient" : f.code === "fhir_invalid" ? "structure" : "not-supported",
    details: { text: f.message },
    diagnostics: f.code,
    expression: [expressionOf(i, f.path)],
  };
  return { response: { status: f.status, outcome: { resourceType: "OperationOutcome", issue: [issue] } } };
}

export function skippedEntry(why: string): BundleEntry {
  return { response: { status: "200 OK", outcome: { resourceType: "OperationOutcome", issue: [{ severity: "information", code: "informational", details: { text: why } }] } } };
}

/**
 * The answer to an entry whose logs were written: 201 when any log is new, 200 when all
 * were stored before (a re-sent Bundle), each log named with its id and type.
 */
export function writtenEntry(i: number, logs: { index: number; log_type: string }[], answer: BatchAnswer): BundleEntry {
  const results = logs.map((l) => (answer.results[l.index]?.index === l.index ? answer.results[l.index] : answer.results.find((r) => r.index === l.index)));
  const failed = logs.findIndex((_, k) => results[k]?.status !== "accepted" && results[k]?.status !== "duplicate");
  if (failed >= 0) {
    const e = answer.errors.find((x) => x.index === logs[failed]!.index);
    const status = e?.code === "patient_not_found" ? "404 Not Found" : e?.code === "storage_error" ? "503 Service Unavailable" : "422 Unprocessable Entity";
    return failedEntry(i, { status, code: e?.code ?? "storage_error", message: e?.message ?? "not stored; send the Bundle again", path: [] });
  }
  const issue: OperationOutcomeIssue[] = logs.map((l, k) => ({
    severity: "information",
    code: results[k]!.status === "duplicate" ? "duplicate" : "informational",
    details: { text: `${results[k]!.status === "duplicate" ? "already stored" : "stored"} as ${l.log_type} log ${results[k]!.id}` },
  }));
  const fresh = results.some((r) => r!.status === "accepted");
  return { response: { status: fresh ? "201 Created" : "200 OK", outcome: { resourceType: "OperationOutcome", issue } } };
}
