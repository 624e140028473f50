import type { Clocks } from "./lib/clocks.js";
import { maxTime, minTime } from "./lib/time.js";
import { typedLog, type LogRecord } from "./log-record.js";
import { EVENT_MODULES, STABLE_MODULES } from "./module.js";
import type { EventKey, ModuleContext, ModuleKey, ModuleKind, ModuleState, ReadModel, StableKey } from "./module.js";
import { compareLogs } from "./order.js";
import type { ModulePayloads } from "./payloads.js";
import { MODELS } from "./registry.js";
import { routeLog } from "./routing.js";

/** One compiled module of a patient. created_at/updated_at are event timestamps of logs, not wall clock. */
export interface ModuleEntry<K extends ModuleKey = ModuleKey> {
  module_type: K;
  payload: ModulePayloads[K];
  /** Earliest event timestamp among the logs that changed the module. */
  created_at: string;
  /** Latest event timestamp among the logs that changed the module. */
  updated_at: string;
  /** Internal write clocks (see lib/clocks.ts); persisted with the state, never served: use toModuleRead. */
  clocks: Clocks;
}

export interface PatientState {
  patient_id: string;
  /** IANA zone used for the day of device readings without local_date. @default "UTC" */
  timezone: string;
  /** The patient record's date of birth (views use it when no demographics log gave one). */
  date_of_birth: string | null;
  /** Modules appear once a log has changed them. */
  stable: { [K in StableKey]?: ModuleEntry<K> };
  event: { [K in EventKey]?: ModuleEntry<K> };
  /** Number of logs folded into this state. */
  applied: number;
}

/** What one log did to one module: the basis of the event audit (get_events `changes`). */
export interface ModuleChange {
  module_type: ModuleKey;
  kind: ModuleKind;
  op: "created" | "updated";
  /** Top-level payload fields whose value changed. */
  fields?: string[];
}

export function emptyPatientState(patient_id: string, timezone = "UTC", date_of_birth: string | null = null): PatientState {
  return { patient_id, timezone, date_of_birth, stable: {}, event: {}, applied: 0 };
}

/** A module entry as the state reads answer it: `{module_type, payload, created_at, updated_at}`. */
export function toModuleRead<K extends ModuleKey>(entry: ModuleEntry<K>): Omit<ModuleEntry<K>, "clocks"> {
  const { module_type, payload, created_at, updated_at } = entry;
  return { module_type, payload, created_at, updated_at };
}

export function moduleEntry<K extends ModuleKey>(state: PatientState, key: K): ModuleEntry<K> | undefined {
  const table = (MODELS[key].kind === "stable" ? state.stable : state.event) as Partial<Record<ModuleKey, ModuleEntry>>;
  return table[key] as ModuleEntry<K> | undefined;
}

/** Sets one entry, keeping the table's keys in catalog order so equal states serialize identically. */
function withEntry<T extends object>(table: T, order: readonly ModuleKey[], key: ModuleKey, entry: ModuleEntry): T {
  if (key in table) return { ...table, [key]: entry };
  const all = { ...table, [key]: entry } as Record<string, ModuleEntry>;
  return Object.fromEntries(order.filter((k) => k in all).map((k) => [k, all[k]])) as T;
}

function changedFields(before: unknown, after: unknown): string[] {
  const a = before as Record<string, unknown>;
  const b = after as Record<string, unknown>;
  // By reference: reducers update immutably, so an untouched field keeps its object. A
  // field rebuilt with equal content is reported as changed (the audit says "rewritten");
  // comparing contents cost more than the whole rest of the fold on long histories.
  const out: string[] = [];
  for (const k in b) if (a[k] !== b[k]) out.push(k);
  for (const k in a) if (!(k in b)) out.push(k);
  return sortSmall(out);
}

/**
 * Sorts strings in place as `Array.prototype.sort()` does (by UTF-16 code units). An
 * insertion sort for the few fields a log changes: the built-in sort allocated a work
 * array on every call, 3% of all the bytes a job's replay allocated.
 */
function sortSmall(xs: string[]): string[] {
  if (xs.length > 16) return xs.sort();
  for (let i = 1; i < xs.length; i++) {
    const x = xs[i]!;
    let j = i - 1;
    for (; j >= 0 && xs[j]! > x; j--) xs[j + 1] = xs[j]!;
    xs[j + 1] = x;
  }
  return xs;
}

/** What modules read of the state as it stood before a log, or as the log has left it so far (a class: one is made per log). */
class StateContext implements ModuleContext {
  readonly patient_id: string;
  readonly timezone: string;
  /** The state with the modules evolved so far for this log. */
  now: PatientState;

  constructor(private readonly state: PatientState) {
    this.patient_id = state.patient_id;
    this.timezone = state.timezone;
    this.now = state;
  }

  read<K extends ModuleKey>(key: K): ModulePayloads[K] | undefined {
    return moduleEntry(this.state, key)?.payload;
  }

  readAfter<K extends ModuleKey>(key: K): ModulePayloads[K] | undefined {
    return moduleEntry(this.now, key)?.payload;
  }
}

/**
 * Applies one log to a patient's state: every module the log routes to evolves, and each
 * one that changed is reported. Modules read each other through the context as the state
 * stood before this log (e.g. adherence reads the medication list for dose windows), or
 * as the modules routed before them left it (the list a list update makes).
 * Logs must come in compareLogs order for the result to be the contract's state.
 */
export function evolvePatient(state: PatientState, log: LogRecord): { state: PatientState; changes: ModuleChange[] } {
  const ctx = new StateContext(state);
  let stable = state.stable;
  let event = state.event;
  const changes: ModuleChange[] = [];
  const typed = typedLog(log);
  for (const key of routeLog(log.log_type)) {
    // The registry's mapped type pairs each key with its own document type; past this point one key is handled at a time.
    const model = MODELS[key] as unknown as ReadModel<ModuleKey, unknown>;
    const prev = moduleEntry<ModuleKey>(state, key);
    const before: ModuleState<unknown> = prev ? { doc: prev.payload, clocks: prev.clocks } : { doc: model.initial(), clocks: {} };
    const after = model.evolve(before, typed, ctx);
    const docChanged = after.doc !== before.doc;
    if (!docChanged && (after.clocks === before.clocks || !prev)) continue;
    const entry = {
      module_type: key,
      payload: after.doc,
      created_at: prev ? minTime(prev.created_at, log.timestamp) : log.timestamp,
      updated_at: !prev ? log.timestamp : docChanged ? maxTime(prev.updated_at, log.timestamp) : prev.updated_at,
      clocks: after.clocks,
    } as ModuleEntry;
    if (model.kind === "stable") stable = withEntry(stable, STABLE_MODULES, key, entry);
    else event = withEntry(event, EVENT_MODULES, key, entry);
    if (docChanged) ctx.now = { ...state, stable, event };
    if (docChanged) changes.push({ module_type: key, kind: model.kind, op: prev ? "updated" : "created", fields: changedFields(before.doc, after.doc) });
  }
  return { state: { ...state, stable, event, applied: state.applied + 1 }, changes };
}

/** Folds a patient's logs from the empty state, sorting them first (a replay or rebuild). */
export function replayPatient(patient_id: string, timezone: string, logs: readonly LogRecord[]): PatientState {
  return [...logs].sort(compareLogs).reduce((s, log) => evolvePatient(s, log).state, emptyPatientState(patient_id, timezone));
}

/** True when `log` sorts before the last applied one: a live apply must then replay from before it. */
export function isLate(lastApplied: Pick<LogRecord, "timestamp" | "id"> | undefined, log: Pick<LogRecord, "timestamp" | "id">): boolean {
  return lastApplied !== undefined && compareLogs(log, lastApplied) < 0;
}
