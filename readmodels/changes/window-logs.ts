/**
 * The window's logs, each folded alone. The modules keep bounded lists (the newest 50 CGM
 * readings, dose reports and symptom reports, 100 vital-sign events), which a window of
 * weeks outgrows: what each log of the window said is read from the log itself, through
 * the module that reads it, so its units, names and flags are the module's. A log is in
 * the window by its event time (when it was reported), whatever time it says it measured.
 */
import type { LogRecord } from "../log-record.js";
import type { ModuleKey } from "../module.js";
import { compareLogs } from "../order.js";
import { emptyPatientState, evolvePatient, moduleEntry, type PatientState } from "../patient-state.js";
import { MODELS } from "../registry.js";
import { routeLog } from "../routing.js";

/** Modules whose lists a window's answer reads, and the ones they read while folding (dose reports read the medication list). */
const READ_ALONE: readonly ModuleKey[] = ["glucose", "heart", "vitals", "symptoms", "adherence"];
const CONTEXT: readonly ModuleKey[] = ["medications"];

export interface LoneLog {
  log: LogRecord;
  /** The log folded alone, onto the context modules as they stand at the window's end. */
  state: PatientState;
}

/** The context modules of `after`, alone: what a lone fold reads (a dose report's medication, for its name and window). */
function contextOf(after: PatientState): PatientState {
  const base = emptyPatientState(after.patient_id, after.timezone, after.date_of_birth);
  const stable: Record<string, unknown> = {};
  const event: Record<string, unknown> = {};
  for (const key of CONTEXT) {
    const entry = moduleEntry(after, key);
    if (entry) (MODELS[key].kind === "stable" ? stable : event)[key] = entry;
  }
  return { ...base, stable, event };
}

/** Each of `logs` (the window's) that one of READ_ALONE reads, folded alone, in fold order. */
export function foldedAlone(after: PatientState, logs: readonly LogRecord[]): LoneLog[] {
  const base = contextOf(after);
  return logs
    .filter((log) => routeLog(log.log_type).some((k) => READ_ALONE.includes(k)))
    .sort(compareLogs)
    .map((log) => ({ log, state: evolvePatient(base, log).state }));
}
