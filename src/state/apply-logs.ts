import type { LogRecord } from "../../readmodels/log-record.js";
import { compareLogs } from "../../readmodels/order.js";
import { emptyPatientState, evolvePatient, isLate, type ModuleChange } from "../../readmodels/patient-state.js";
import type { ModuleKey } from "../../readmodels/module.js";
import { MODEL_FINGERPRINT, type StateEvent, type StoredPatientState } from "../../infra/redis/state-store.js";

/** One stored JetStream message of a patient: the logs one batch carried for it. */
export interface SequencedLogs {
  seq: number;
  logs: LogRecord[];
}

export interface ApplyResult {
  stored: StoredPatientState;
  events: StateEvent[];
  /** Modules that changed: the views that read them are regenerated. */
  changed: Set<ModuleKey>;
  /** A log sorted before what the state already holds: the caller must replay instead. */
  late: boolean;
}

export function emptyStored(patientId: string, timezone: string, organization_id: string, project_id: string, date_of_birth: string | null = null): StoredPatientState {
  return { fingerprint: MODEL_FINGERPRINT, organization_id, project_id, state: emptyPatientState(patientId, timezone, date_of_birth), applied_seq: 0, last: null, events_total: 0, module_seq: {} };
}

function event(log: LogRecord, changes: ModuleChange[], n: number, completedAt: string): StateEvent {
  return {
    id: `evt_${log.id.slice(4)}`,
    trigger: "log",
    log_type: log.log_type,
    status: changes.length > 0 ? "applied" : "no_change",
    triggered_at: log.ingested_at,
    completed_at: completedAt,
    source_event_log_id: log.id,
    log_timestamp: log.timestamp,
    changes,
  };
}

/**
 * Applies messages in stream order on top of a stored state. Messages at or below the
 * applied sequence are already in it (a redelivery after a crash between write and ack)
 * and change nothing. Stops at the first late log: the fold order would be wrong.
 */
export function applyInOrder(stored: StoredPatientState, messages: readonly SequencedLogs[], completedAt: string): ApplyResult {
  let s = stored;
  const events: StateEvent[] = [];
  const changed = new Set<ModuleKey>();
  for (const m of messages) {
    if (m.seq <= s.applied_seq) continue;
    const logs = [...m.logs].sort(compareLogs);
    const first = logs[0];
    if (first !== undefined && isLate(s.last ?? undefined, first)) return { stored: s, events, changed, late: true };
    let state = s.state;
    let total = s.events_total;
    const moduleSeq = { ...s.module_seq };
    for (const log of logs) {
      const r = evolvePatient(state, log);
      state = r.state;
      for (const c of r.changes) {
        changed.add(c.module_type);
        moduleSeq[c.module_type] = m.seq;
      }
      events.push(event(log, r.changes, ++total, completedAt));
    }
    const tail = logs.at(-1);
    const last = tail ? { timestamp: tail.timestamp, id: tail.id } : s.last;
    s = { ...s, state, applied_seq: m.seq, last, events_total: total, module_seq: moduleSeq };
  }
  return { stored: s, events, changed, late: false };
}

/**
 * Rebuilds a patient from its whole history: every log sorted into fold order and
 * folded from the empty state. The result is the same whatever order the logs arrived in.
 */
export function replayAll(base: StoredPatientState, history: readonly SequencedLogs[], completedAt: string): ApplyResult {
  const logs = history.flatMap((m) => m.logs).sort(compareLogs);
  let state = emptyPatientState(base.state.patient_id, base.state.timezone, base.state.date_of_birth);
  const events: StateEvent[] = [];
  const changed = new Set<ModuleKey>();
  let n = 0;
  for (const log of logs) {
    const r = evolvePatient(state, log);
    state = r.state;
    for (const c of r.changes) changed.add(c.module_type);
    events.push(event(log, r.changes, ++n, completedAt));
  }
  const last = logs.at(-1);
  const appliedSeq = history.reduce((mx, m) => Math.max(mx, m.seq), 0);
  return {
    stored: {
      ...base,
      fingerprint: MODEL_FINGERPRINT,
      state,
      applied_seq: appliedSeq,
      // A rebuild may have changed any module: every view is rendered again.
      module_seq: Object.fromEntries([...changed].map((k) => [k, appliedSeq])),
      last: last ? { timestamp: last.timestamp, id: last.id } : null,
      events_total: n,
    },
    events,
    changed,
    late: false,
  };
}
