import type { Redis } from "./connection.js";
import { asBulkArguments, SAVE_SCRIPTS } from "./state-save-scripts.js";
import type { PatientState, ModuleChange } from "../../readmodels/patient-state.js";
import { MODELS, MODULE_VERSIONS } from "../../readmodels/registry.js";
import { EVENT_MODULES, STABLE_MODULES, type ModuleKey } from "../../readmodels/module.js";

/**
 * Version of how this store (with its save scripts) lays a patient out in Redis: the state hash's fields, the
 * meta's keys, the audit's members, a cached view's record. Bump it with any change to
 * them, and a state saved in another layout is rebuilt from the log like one made by
 * other reducers: no reader has to understand a layout but the current one.
 */
export const STATE_LAYOUT_VERSION = 2;

/**
 * The layout's version and every reducer's: a snapshot under another fingerprint is
 * rebuilt by replay, and a view cached under another is rendered again.
 */
export const MODEL_FINGERPRINT = [`layout:${STATE_LAYOUT_VERSION}`, ...Object.entries(MODULE_VERSIONS).map(([k, v]) => `${k}:${v}`)].join(",");

/** A patient's compiled state as stored: the state and how far into the log stream it goes. */
export interface StoredPatientState {
  fingerprint: string;
  organization_id: string;
  project_id: string;
  state: PatientState;
  /** Highest stream sequence applied for this patient. Written in the same SET as the state. */
  applied_seq: number;
  /** Latest log applied in fold order: a log sorting before it is late and triggers a replay. */
  last: { timestamp: string; id: string } | null;
  /** Events recorded so far (numbering of the audit). */
  events_total: number;
  /**
   * Stream sequence of the last message that changed each module: a cached view stays
   * current until one of its inputs changes (see view-cache.ts).
   */
  module_seq: Partial<Record<ModuleKey, number>>;
}

/** One row of the event audit: what one log did to the state. */
export interface StateEvent {
  id: string;
  trigger: "log";
  log_type: string;
  status: "applied" | "no_change";
  triggered_at: string;
  completed_at: string;
  source_event_log_id: string;
  log_timestamp: string;
  changes: ModuleChange[];
}

/** Most audit rows kept per patient in Redis; older ones come back by replaying the log. */
export const EVENTS_KEPT = 1_000;

/**
 * Redis keys of one patient. The `{patient}` hash tag puts them in one Redis Cluster
 * slot, so the state, its events and its views change in one atomic step.
 */
export function patientKeys(prefix: string, patientId: string) {
  const tag = `{${patientId}}`;
  return {
    state: `${prefix}:ps:${tag}`,
    events: `${prefix}:ev:${tag}`,
    views: `${prefix}:vw:${tag}`,
  };
}

/** Highest stream sequence accepted per patient of a project: one sorted set, raised with ZADD GT. */
const acceptedKey = (prefix: string, projectId: string) => `${prefix}:acc:{${projectId}}`;

type Meta = Omit<StoredPatientState, "state"> & { patient_id: string; timezone: string; date_of_birth: string | null; applied: number };

const MODULE_FIELD = "m:";
/** The applied sequence again, as a plain field: what the save scripts compare. */
const SEQ_FIELD = "seq";

/**
 * Most audit rows one stored member holds. A save stores its rows as few members (a JSON
 * array each, scored by the number of its last row) rather than one member per row: a
 * job's hundred-log message was two hundred arguments to encode and a hundred sorted-set
 * entries for Redis to insert and keep. Bounded so a page of 50 rows never reads a whole
 * 5,000-log batch's audit.
 */
export const ROWS_PER_MEMBER = 100;
/** Members read per round trip while a page of rows fills. */
const MEMBERS_PER_READ = 16;

/**
 * A patient's state is one Redis hash: `meta` (sequence, fingerprint, fold position)
 * and one field per module (`m:<key>`, the module entry with its clocks). A save writes
 * only the modules that changed, with the meta, in one atomic step; a read fetches only the
 * modules it answers with.
 */
export class PatientStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  keys(patientId: string) {
    return patientKeys(this.prefix, patientId);
  }

  private static assemble(meta: Meta, modules: [string, string][]): StoredPatientState {
    const { patient_id, timezone, date_of_birth, applied } = meta;
    const state: PatientState = { patient_id, timezone, date_of_birth, stable: {}, event: {}, applied };
    for (const [field, raw] of modules) {
      const key = field.slice(MODULE_FIELD.length) as ModuleKey;
      const table = (MODELS[key]?.kind === "stable" ? state.stable : state.event) as Record<string, unknown>;
      if (MODELS[key]) table[key] = JSON.parse(raw);
    }
    // Keep the catalog order of modules, as the fold does, so equal states serialize alike.
    state.stable = Object.fromEntries(STABLE_MODULES.filter((k) => k in state.stable).map((k) => [k, state.stable[k]]));
    state.event = Object.fromEntries(EVENT_MODULES.filter((k) => k in state.event).map((k) => [k, state.event[k]]));
    // A literal (not `{ ...rest, state }`): every message copies this object with a spread,
    // and V8 gives a spread followed by new keys a hidden class of its own each time.
    return {
      fingerprint: meta.fingerprint, organization_id: meta.organization_id, project_id: meta.project_id, state,
      applied_seq: meta.applied_seq, last: meta.last, events_total: meta.events_total, module_seq: meta.module_seq,
    };
  }

  /** The whole state (the engine's load). */
  async load(patientId: string): Promise<StoredPatientState | null> {
    const all = await this.redis.hGetAll(this.keys(patientId).state);
    if (!all.meta) return null;
    return PatientStateStore.assemble(JSON.parse(all.meta) as Meta, Object.entries(all).filter(([f]) => f.startsWith(MODULE_FIELD)));
  }

  /** The state with only `modules` (none: the meta alone), meta and modules read together. */
  async loadModules(patientId: string, modules: readonly ModuleKey[]): Promise<StoredPatientState | null> {
    const values = await this.redis.hmGet(this.keys(patientId).state, PatientStateStore.fieldsOf(modules));
    return values[0] ? PatientStateStore.fromFields(values[0], modules, values) : null;
  }

  /** The state hash's fields for `modules`, after the meta: what fromFields reads back. */
  private static fieldsOf(modules: readonly ModuleKey[]): string[] {
    return ["meta", ...modules.map((k) => MODULE_FIELD + k)];
  }

  /** A state from the values of fieldsOf(modules), in that order; missing modules are left out. */
  private static fromFields(meta: string, modules: readonly ModuleKey[], values: readonly (string | null)[]): StoredPatientState {
    const present: [string, string][] = [];
    for (let i = 0; i < modules.length; i++) if (values[i + 1]) present.push([MODULE_FIELD + modules[i]!, values[i + 1]!]);
    return PatientStateStore.assemble(JSON.parse(meta) as Meta, present);
  }

  /**
   * The state with only `modules` (a read), plus the highest sequence accepted for the
   * patient, and the stored copy of `view` when asked: one round trip.
   */
  async loadPart(
    projectId: string,
    patientId: string,
    modules: readonly ModuleKey[],
    view?: string,
    /** False: leave the modules as stored text (`raw`, empty otherwise), for a read that answers them as they are. */
    parse = true,
  ): Promise<{ stored: StoredPatientState | null; accepted: number; view: string | null; raw: Partial<Record<ModuleKey, string>> }> {
    const k = this.keys(patientId);
    const [values, accepted, cachedView] = await Promise.all([
      this.redis.hmGet(k.state, PatientStateStore.fieldsOf(modules)),
      this.redis.zScore(acceptedKey(this.prefix, projectId), patientId),
      view === undefined ? null : this.redis.hGet(k.views, view),
    ]);
    const meta = values[0];
    const viewRaw = cachedView ?? null;
    const raw: Partial<Record<ModuleKey, string>> = {};
    if (!meta) return { stored: null, accepted: accepted ?? 0, view: viewRaw, raw };
    if (parse) return { stored: PatientStateStore.fromFields(meta, modules, values), accepted: accepted ?? 0, view: viewRaw, raw };
    for (let i = 0; i < modules.length; i++) if (values[i + 1]) raw[modules[i]!] = values[i + 1]!;
    return { stored: PatientStateStore.fromFields(meta, [], values), accepted: accepted ?? 0, view: viewRaw, raw };
  }

  /**
   * Writes the changed modules with the meta (applied sequence included) and the new audit
   * rows in one atomic step: a crash never leaves modules whose sequence does not match.
   * `changed` undefined: everything (a first save, a rebuild), replacing what was there
   * unless Redis holds a state folded further. With `changed`, written only over the state
   * of sequence `base` (the one the caller loaded). False when nothing was written: the
   * caller rebuilds from the stream (see SAVE_CHANGED and SAVE_ALL).
   */
  async save(s: StoredPatientState, events: StateEvent[], changed?: readonly ModuleKey[], base = 0): Promise<boolean> {
    const k = this.keys(s.state.patient_id);
    const state = s.state;
    // Named fields, not `{ ...rest, more }`: V8 gives an object spread followed by new keys
    // a fresh hidden class every time (about 1 us per added key on this VM).
    const meta: Meta = {
      fingerprint: s.fingerprint, organization_id: s.organization_id, project_id: s.project_id, applied_seq: s.applied_seq,
      last: s.last, events_total: s.events_total, module_seq: s.module_seq,
      patient_id: state.patient_id, timezone: state.timezone, date_of_birth: state.date_of_birth, applied: state.applied,
    };
    // One flat argument list, built once: the scripts' layout (see SAVE_CHANGED).
    const args: string[] = ["", String(changed === undefined ? s.applied_seq : base), "meta", JSON.stringify(meta), SEQ_FIELD, String(s.applied_seq)];
    const stable = state.stable as Record<string, unknown>;
    const event = state.event as Record<string, unknown>;
    for (const key of changed ?? [...Object.keys(stable), ...Object.keys(event)]) {
      const entry = stable[key] ?? event[key];
      if (entry !== undefined) args.push(MODULE_FIELD + key, JSON.stringify(entry));
    }
    args[0] = String(args.length - 2);
    const first = s.events_total - events.length + 1;
    // Trimmed when the count crosses a hundred, not on every save: up to 99 extra rows.
    // A full save always trims.
    const trim = changed === undefined || (events.length > 0 && Math.floor((first - 1) / 100) !== Math.floor(s.events_total / 100));
    args.push(trim ? trimScore(s.events_total) : "");
    args.push(first > 1 ? "1" : "0");
    auditMembers(events, first, args);
    if (changed !== undefined) return this.runSave(SAVE_SCRIPTS.changed, [k.state, k.events], args);
    return this.runSave(SAVE_SCRIPTS.all, [k.state, k.events, k.views], args);
  }

  private async runSave(script: { text: string; sha: string }, keys: string[], texts: string[]): Promise<boolean> {
    const args = asBulkArguments(texts);
    try {
      return (await this.redis.evalSha(script.sha, { keys, arguments: args })) === 1;
    } catch (err) {
      // Redis forgot the script (a restart, SCRIPT FLUSH): send it whole once.
      if (!String((err as Error).message).startsWith("NOSCRIPT")) throw err;
      return (await this.redis.eval(script.text, { keys, arguments: args })) === 1;
    }
  }

  /**
   * Stores rendered views, only beside a stored state: a render that finishes after the
   * patient was erased (its own deletion, or its project's) must not leave its views
   * behind. The check runs in the same transaction as the write, and takes the views back
   * when the state is gone.
   */
  async saveViews(patientId: string, views: Record<string, string>): Promise<void> {
    if (Object.keys(views).length === 0) return;
    const k = this.keys(patientId);
    const [, held] = await this.redis.multi().hSet(k.views, views).exists(k.state).exec();
    if (Number(held) === 0) await this.redis.del(k.views);
  }

  /** Stored copies of several views, in the order asked (null where none). */
  async loadViews(patientId: string, viewTypes: readonly string[]): Promise<(string | null)[]> {
    if (viewTypes.length === 0) return [];
    return this.redis.hmGet(this.keys(patientId).views, [...viewTypes]);
  }

  async loadView(patientId: string, viewType: string): Promise<string | null> {
    return (await this.redis.hGet(this.keys(patientId).views, viewType)) ?? null;
  }

  /** Audit rows numbered after `afterScore`, oldest first, at most `limit`; each row's number is its score. */
  async events(patientId: string, afterScore: number, limit: number): Promise<{ score: number; event: StateEvent }[]> {
    const key = this.keys(patientId).events;
    const out: { score: number; event: StateEvent }[] = [];
    // A member is scored by its last row, so the first one read may start before the cursor.
    for (let from = afterScore; ; ) {
      const members = await this.redis.zRangeByScoreWithScores(key, `(${from}`, "+inf", { LIMIT: { offset: 0, count: MEMBERS_PER_READ } });
      for (const m of members) {
        const rows = auditRows(m.value);
        for (let i = 0, n = m.score - rows.length + 1; i < rows.length; i++, n++) {
          if (n <= afterScore) continue;
          out.push({ score: n, event: rows[i]! });
          if (out.length === limit) return out;
        }
        from = m.score;
      }
      if (members.length < MEMBERS_PER_READ) return out;
    }
  }

  /**
   * Remembers the highest stream sequence accepted for each patient of a batch: one
   * command, and GT keeps concurrent batches from lowering it.
   */
  async raiseAccepted(projectId: string, entries: { patient_id: string; seq: number }[]): Promise<void> {
    if (entries.length === 0) return;
    await this.redis.zAdd(
      acceptedKey(this.prefix, projectId),
      entries.map((e) => ({ score: e.seq, value: e.patient_id })),
      { comparison: "GT" },
    );
  }

  /** Highest stream sequence accepted for any patient of the project (0 when none). */
  async projectAccepted(projectId: string): Promise<number> {
    const top = await this.redis.zRangeWithScores(acceptedKey(this.prefix, projectId), -1, -1);
    return top[0]?.score ?? 0;
  }

  async erase(projectId: string, patientId: string): Promise<void> {
    const k = this.keys(patientId);
    await this.redis.del([k.state, k.events, k.views]);
    await this.redis.zRem(acceptedKey(this.prefix, projectId), patientId);
  }
}

/** The modules whose entry differs (by reference: the fold is immutable) between two states. */
export function changedModules(before: PatientState, after: PatientState): ModuleKey[] {
  const out: ModuleKey[] = [];
  for (const k of STABLE_MODULES) if (before.stable[k] !== after.stable[k]) out.push(k);
  for (const k of EVENT_MODULES) if (before.event[k] !== after.event[k]) out.push(k);
  return out;
}

/** Score up to which audit members go once a patient has `total` rows: all but the last EVENTS_KEPT. */
function trimScore(total: number): string {
  return String(total - EVENTS_KEPT);
}

/**
 * Appends the score/member pairs that store `events` (numbered from `first`): members of
 * at most ROWS_PER_MEMBER rows, each a JSON array scored by the number of its last row.
 */
export function auditMembers(events: readonly StateEvent[], first: number, out: string[]): void {
  for (let i = 0; i < events.length; i += ROWS_PER_MEMBER) {
    const group = events.length <= ROWS_PER_MEMBER ? events : events.slice(i, i + ROWS_PER_MEMBER);
    out.push(String(first + i + group.length - 1), JSON.stringify(group));
  }
}

/** The rows of one stored audit member (see auditMembers). */
export function auditRows(member: string): StateEvent[] {
  return JSON.parse(member) as StateEvent[];
}
