import type { Redis } from "../infra/redis.js";
import type { PatientState, ModuleChange } from "../readmodels/patient-state.js";
import { MODULE_VERSIONS } from "../readmodels/registry.js";

/** Changes when any reducer's version changes: a snapshot under another fingerprint is rebuilt by replay. */
export const MODEL_FINGERPRINT = Object.entries(MODULE_VERSIONS)
  .map(([k, v]) => `${k}:${v}`)
  .join(",");

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
 * slot, so the state, its events and its views change in one MULTI.
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

export class PatientStateStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  keys(patientId: string) {
    return patientKeys(this.prefix, patientId);
  }

  async load(patientId: string): Promise<StoredPatientState | null> {
    const raw = await this.redis.get(this.keys(patientId).state);
    return raw ? (JSON.parse(raw) as StoredPatientState) : null;
  }

  /**
   * Writes the state with its applied sequence, and the new audit rows, in one MULTI:
   * a crash can never leave a state whose sequence does not match what it contains.
   */
  async save(s: StoredPatientState, events: StateEvent[], replaceEvents = false): Promise<void> {
    const k = this.keys(s.state.patient_id);
    const m = this.redis.multi();
    m.set(k.state, JSON.stringify(s));
    if (replaceEvents) m.del(k.events);
    if (events.length > 0) {
      const first = s.events_total - events.length + 1;
      m.zAdd(
        k.events,
        events.map((e, i) => ({ score: first + i, value: JSON.stringify(e) })),
      );
      m.zRemRangeByRank(k.events, 0, -EVENTS_KEPT - 1);
    }
    await m.exec();
  }

  async saveViews(patientId: string, views: Record<string, string>): Promise<void> {
    if (Object.keys(views).length > 0) await this.redis.hSet(this.keys(patientId).views, views);
  }

  async loadView(patientId: string, viewType: string): Promise<string | null> {
    return (await this.redis.hGet(this.keys(patientId).views, viewType)) ?? null;
  }

  /** Audit rows after `cursor` (exclusive), oldest first. */
  async events(patientId: string, afterScore: number, limit: number): Promise<{ score: number; event: StateEvent }[]> {
    const rows = await this.redis.zRangeByScoreWithScores(this.keys(patientId).events, `(${afterScore}`, "+inf", { LIMIT: { offset: 0, count: limit } });
    return rows.map((r) => ({ score: r.score, event: JSON.parse(r.value) as StateEvent }));
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

  async accepted(projectId: string, patientId: string): Promise<number> {
    return (await this.redis.zScore(acceptedKey(this.prefix, projectId), patientId)) ?? 0;
  }

  async erase(projectId: string, patientId: string): Promise<void> {
    const k = this.keys(patientId);
    await this.redis.del([k.state, k.events, k.views]);
    await this.redis.zRem(acceptedKey(this.prefix, projectId), patientId);
  }
}
