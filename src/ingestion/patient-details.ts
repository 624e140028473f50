import type { JobRecord } from "./job-record.js";

/**
 * Most patients a job's per-patient maps (patient_log_counts, patient_event_type_counts,
 * patient_replay_statuses) describe: the record is one KV value, read on every poll, and
 * a file may hold millions of patients. Past it `patient_details_truncated` is true.
 */
export const MAX_PATIENT_DETAILS = 1_000;

/** A log line's patient as VALIDATING knows it: the line of its patient row, or an existing patient's id. */
export type Target = number | string;
/** A row of the job's "type_counts" document: one patient's valid logs by (canonical) type. */
export type TargetTypeRow = [target: Target, types: Record<string, number>];

/**
 * Counts the valid logs of each patient by type while VALIDATING reads the file, for the
 * first MAX_PATIENT_DETAILS patients it meets (memory stays bounded whatever the file).
 */
export class TargetTypeCounts {
  private readonly counts = new Map<Target, Record<string, number>>();

  add(target: Target, logType: string): void {
    let c = this.counts.get(target);
    if (c === undefined) {
      if (this.counts.size >= MAX_PATIENT_DETAILS) return;
      c = {};
      this.counts.set(target, c);
    }
    c[logType] = (c[logType] ?? 0) + 1;
  }

  rows(): TargetTypeRow[] {
    return [...this.counts];
  }
}

/**
 * Fills the per-patient maps once INSERTING_LOGS knows each target's patient id and how
 * many logs it staged per patient: counts by type from VALIDATING, every replay pending.
 * A target whose patient row was not placed staged nothing and is left out.
 */
export function settlePatientDetails(r: JobRecord, rows: readonly TargetTypeRow[], idOf: (t: Target) => string | undefined, staged: ReadonlyMap<string, number>): void {
  const byType: Record<string, Record<string, number>> = {};
  for (const [target, types] of rows) {
    const id = idOf(target);
    if (id === undefined || !staged.has(id)) continue;
    const into = (byType[id] ??= {});
    for (const [t, n] of Object.entries(types)) into[t] = (into[t] ?? 0) + n;
  }
  const ids = Object.keys(byType);
  r.patient_event_type_counts = byType;
  r.patient_log_counts = Object.fromEntries(ids.map((id) => [id, staged.get(id)!]));
  r.patient_replay_statuses = Object.fromEntries(ids.map((id) => [id, "pending" as const]));
  r.patient_details_truncated = staged.size > ids.length;
}

/** Patients whose staged logs REPLAYING has written; `failed`: those with a log it could not store. */
export function markReplayed(r: JobRecord, patients: Iterable<string>, failed: ReadonlySet<string>): void {
  const s = r.patient_replay_statuses;
  for (const p of patients) {
    if (s[p] === undefined || s[p] === "failed") continue;
    s[p] = failed.has(p) ? "failed" : "completed";
  }
}

/** Takes a patient out of the per-patient maps (removed from the job under review). */
export function forgetPatient(r: JobRecord, patientId: string): void {
  delete r.patient_log_counts[patientId];
  delete r.patient_event_type_counts[patientId];
  delete r.patient_replay_statuses[patientId];
}
