import type { JobRecord } from "./job-record.js";

/**
 * Most patients a job's per-patient maps (patient_log_counts, patient_event_type_counts,
 * patient_replay_statuses) describe: the record is one KV value, read on every poll, and
 * a file may hold millions of patients. Past it `patient_details_truncated` is true.
 */
export const MAX_PATIENT_DETAILS = 1_000;

/** A log line's patient as VALIDATING knows it: the line of its patient row, or an existing patient's id. */
export type Target = number | string;
/** A row of the job's "type_counts" document: one patient's valid logs by (canonical) type, and its lines skipped as invalid. */
export type TargetTypeRow = [target: Target, types: Record<string, number>, invalid?: number];

/**
 * Counts the valid logs of each patient by type while VALIDATING reads the file, for the
 * first MAX_PATIENT_DETAILS patients it meets (memory stays bounded whatever the file).
 */
export class TargetTypeCounts {
  private readonly counts = new Map<Target, { types: Record<string, number>; invalid: number }>();

  add(target: Target, logType: string): void {
    const c = this.of(target);
    if (c) c.types[logType] = (c.types[logType] ?? 0) + 1;
  }

  /** `n` log lines (or FHIR resources) of the patient skipped for their own (payload) errors. */
  addInvalid(target: Target, n = 1): void {
    const c = this.of(target);
    if (c) c.invalid += n;
  }

  private of(target: Target): { types: Record<string, number>; invalid: number } | undefined {
    let c = this.counts.get(target);
    if (c === undefined) {
      if (this.counts.size >= MAX_PATIENT_DETAILS) return undefined;
      c = { types: {}, invalid: 0 };
      this.counts.set(target, c);
    }
    return c;
  }

  rows(): TargetTypeRow[] {
    return [...this.counts].map(([t, c]) => (c.invalid > 0 ? [t, c.types, c.invalid] : [t, c.types]));
  }
}

/**
 * Fills the per-patient maps once INSERTING_LOGS knows each target's patient id and how
 * many logs it staged per patient: counts by type from VALIDATING, every replay pending.
 * A target whose patient row was not placed staged nothing and is left out.
 */
export function settlePatientDetails(r: JobRecord, rows: readonly TargetTypeRow[], idOf: (t: Target) => string | undefined, staged: ReadonlyMap<string, number>): void {
  const byType: Record<string, Record<string, number>> = {};
  const invalid: Record<string, number> = {};
  for (const [target, types, skipped] of rows) {
    const id = idOf(target);
    // A patient whose lines were all invalid staged nothing, yet the preview names it.
    if (id !== undefined && skipped) invalid[id] = (invalid[id] ?? 0) + skipped;
    if (id === undefined || !staged.has(id)) continue;
    const into = (byType[id] ??= {});
    for (const [t, n] of Object.entries(types)) into[t] = (into[t] ?? 0) + n;
  }
  const ids = Object.keys(byType);
  r.patient_event_type_counts = byType;
  r.patient_invalid_counts = invalid;
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
  delete r.patient_invalid_counts[patientId];
  delete r.patient_replay_statuses[patientId];
}
