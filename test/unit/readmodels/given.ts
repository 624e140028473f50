import type { LogType } from "../../../catalog/log-types.js";
import type { LogRecord } from "../../../readmodels/log-record.js";
import type { ModuleKey } from "../../../readmodels/module.js";
import { evolvePatient, moduleEntry, replayPatient, emptyPatientState, type PatientState } from "../../../readmodels/patient-state.js";
import type { ModulePayloads } from "../../../readmodels/payloads.js";

let seq = 0;

/** A stored log; ids increase with creation, like acceptance order. */
export function log(log_type: LogType, timestamp: string, payload: Record<string, unknown>, id?: string): LogRecord {
  seq += 1;
  return {
    id: id ?? `log_${String(seq).padStart(8, "0")}`,
    log_type,
    organization_id: "org_1",
    project_id: "prj_1",
    patient_id: "pat_1",
    timestamp,
    ingested_at: timestamp,
    payload,
  };
}

/** given(logs): the state after a sorted replay. */
export function given(logs: readonly LogRecord[], timezone = "UTC"): PatientState {
  return replayPatient("pat_1", timezone, logs);
}

/** Applies logs in exactly the order given (no sorting): arrival order. */
export function applyInArrivalOrder(logs: readonly LogRecord[], timezone = "UTC"): PatientState {
  return logs.reduce((s, l) => evolvePatient(s, l).state, emptyPatientState("pat_1", timezone));
}

export function payload<K extends ModuleKey>(state: PatientState, key: K): ModulePayloads[K] {
  const entry = moduleEntry(state, key);
  if (!entry) throw new Error(`module ${key} not present`);
  return entry.payload;
}

export const at = (day: number, hour = 12, minute = 0) =>
  `2025-03-${String(day).padStart(2, "0")}T${String(hour).padStart(2, "0")}:${String(minute).padStart(2, "0")}:00.000Z`;
