/**
 * The window's logs, each folded alone. The modules keep bounded lists (the newest 50 CGM
 * readings, dose reports and symptom reports, 100 vital-sign events), which a window of
 * weeks outgrows: what each log of the window said is read from the log itself, through
 * the module that reads it, so its units, names and flags are the module's. A log is in
 * the window by its event time (when it was reported), whatever time it says it measured.
 */
import { deviceOutOfRange, entriesOutOfRange, type Finding } from "../findings.js";
import { timeMs } from "../lib/time.js";
import type { LogRecord } from "../log-record.js";
import { reportsDose, type Dose } from "../modules/adherence/index.js";
import { supersede, type VitalsEntry } from "../modules/vitals/index.js";
import type { ModuleKey } from "../module.js";
import { compareLogs } from "../order.js";
import { emptyPatientState, evolvePatient, moduleEntry, type PatientState } from "../patient-state.js";
import { MODELS } from "../registry.js";
import { routeLog } from "../routing.js";
import { doc } from "../views/lib.js";

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

/**
 * Doses reported skipped by the window's logs, less those a later report of the window
 * (taken after all) decides: the module's kept reports are the newest 50, the window's
 * may be more. In fold order.
 */
export function skippedDoses(alone: readonly LoneLog[]): Dose[] {
  const doses = alone.flatMap((a) => doc(a.state, "adherence")?.recent ?? []);
  const byScheduled = new Map<number, number[]>();
  doses.forEach((d, i) => {
    if (d.scheduled_time !== null) byScheduled.set(timeMs(d.scheduled_time), [...(byScheduled.get(timeMs(d.scheduled_time)) ?? []), i]);
  });
  return doses.filter((d, i) => {
    if (d.status !== "skipped" || d.superseded_by !== null) return false;
    if (d.scheduled_time === null) return true;
    const ms = timeMs(d.scheduled_time);
    return !(byScheduled.get(ms) ?? []).some((j) => j > i && reportsDose(doses[j]!, d, ms));
  });
}

/**
 * Vital signs and device readings out of range, from the logs of `alone`. A vital sign
 * measured again at the same instant by a later log is no reading any more (the vitals
 * module's rule, `supersede`), so its entries are put together without the module's cap.
 */
export function readingsOutOfRange(alone: readonly LoneLog[]): { vitals: Finding[]; devices: Finding[] } {
  let entries: VitalsEntry[] = [];
  for (const a of alone) {
    for (const e of doc(a.state, "vitals")?.history ?? []) entries = [...supersede(entries, e.timestamp, e.measurements).history, e];
  }
  return { vitals: entriesOutOfRange(entries), devices: alone.flatMap((a) => deviceOutOfRange(a.state, () => true)) };
}
