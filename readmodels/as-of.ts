import { cmpTime } from "./lib/time.js";
import type { LogRecord } from "./log-record.js";
import { compareLogs } from "./order.js";
import { emptyPatientState, evolvePatient, type PatientState } from "./patient-state.js";

/**
 * Which logs a state reflects: those whose event time is at or before `as_of` and that were
 * accepted (`ingested_at`) at or before `known_at`. A bound left out bounds nothing. Both
 * are canonical UTC instants. The two are independent axes: `as_of` before `known_at` asks
 * what was known at K about the state at T (the usual bitemporal question), and the other
 * way round is meaningful too, as logs may be future-dated.
 */
export interface Horizon {
  as_of?: string;
  known_at?: string;
}

/** The patient record's fields a fold starts from (as today: they are not logs). */
export interface FoldBase {
  patient_id: string;
  timezone: string;
  date_of_birth: string | null;
}

/** `as_of` ordered with "no bound" last. */
const cmpAsOf = (a: string | undefined, b: string | undefined): number =>
  a === undefined ? (b === undefined ? 0 : 1) : b === undefined ? -1 : cmpTime(a, b);

/**
 * The state at each horizon: for each, the fold of exactly the logs within it, in
 * compareLogs order, from the empty state. Horizons that share a `known_at` are one
 * pass: in fold order the logs up to an earlier `as_of` are a prefix of those up to a
 * later one, so the earlier state is a point on the way (a diff folds the history once).
 */
export function statesAt(base: FoldBase, logs: readonly LogRecord[], horizons: readonly Horizon[]): PatientState[] {
  const sorted = [...logs].sort(compareLogs);
  const out: PatientState[] = new Array<PatientState>(horizons.length);
  const groups = new Map<string | undefined, number[]>();
  horizons.forEach((h, i) => groups.set(h.known_at, [...(groups.get(h.known_at) ?? []), i]));
  for (const [known_at, members] of groups) {
    const order = [...members].sort((a, b) => cmpAsOf(horizons[a]!.as_of, horizons[b]!.as_of));
    let state = emptyPatientState(base.patient_id, base.timezone, base.date_of_birth);
    let next = 0;
    for (const log of sorted) {
      if (known_at !== undefined && cmpTime(log.ingested_at, known_at) > 0) continue;
      // Every horizon whose as_of this log passes is complete before it.
      while (next < order.length && cmpAsOf(horizons[order[next]!]!.as_of, log.timestamp) < 0) out[order[next++]!] = state;
      if (next === order.length) break;
      state = evolvePatient(state, log).state;
    }
    while (next < order.length) out[order[next++]!] = state;
  }
  return out;
}

/** The state at one horizon (statesAt of one). */
export function stateAt(base: FoldBase, logs: readonly LogRecord[], h: Horizon): PatientState {
  return statesAt(base, logs, [h])[0]!;
}
