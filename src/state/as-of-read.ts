import { statesAt, type Horizon } from "../../readmodels/as-of.js";
import type { LogRecord } from "../../readmodels/log-record.js";
import type { PatientState } from "../../readmodels/patient-state.js";
import type { Principal } from "../auth/scopes.js";
import { AppError, fieldIssue } from "../errors.js";
import { PatientLog, type PatientLogDeps } from "../logs/patient-log.js";
import { emptyStored } from "./apply-logs.js";
import type { StoredPatientState } from "../../infra/redis/state-store.js";
import type { Patient } from "../control/patients.js";
import { assertViewType, type Snapshot, type StateReader } from "./state-reader.js";
import { renderView, VIEW_TYPES, type View } from "../../readmodels/views/index.js";

/** A snapshot folded from the log at a horizon (never the cached state). */
export interface HorizonSnapshot extends Snapshot {
  horizon: Horizon;
}

/**
 * The horizon a read asked for (undefined: neither bound, the plain cached read), its
 * `known_at` checked by assertKnowable. Both come as canonical UTC instants.
 */
export function horizonOf(as_of: string | undefined, known_at: string | undefined, where: readonly string[], nowIso = new Date().toISOString()): Horizon | undefined {
  if (as_of === undefined && known_at === undefined) return undefined;
  const h: Horizon = { ...(as_of !== undefined ? { as_of } : {}), ...(known_at !== undefined ? { known_at } : {}) };
  assertKnowable(h, nowIso, where);
  return h;
}

/** The time a read at `h` is made at, which a view's week ends on: as_of, else known_at, else now (no horizon). */
export const horizonTime = (h: Horizon | undefined, nowIso: string): string => h?.as_of ?? h?.known_at ?? nowIso;

/** What an answer says it reflects: both bounds (null: not bounded), or nothing for a plain read. */
export function horizonFields(snap: Snapshot): { as_of?: string | null; known_at?: string | null } {
  const h = (snap as Partial<HorizonSnapshot>).horizon;
  return h ? { as_of: h.as_of ?? null, known_at: h.known_at ?? null } : {};
}

/**
 * Refuses a `known_at` later than now: what the service will have accepted by then is not
 * known yet, so the answer would change as logs arrive, unlike any other known_at answer.
 * (`as_of` may lie ahead: logs may carry future event times.) `where` is the parameter's
 * location without its name, e.g. ["query"] or ["arguments"].
 */
export function assertKnowable(h: Horizon, nowIso: string, where: readonly string[], name = "known_at"): void {
  if (h.known_at === undefined || h.known_at <= nowIso) return;
  const message = `${name} ${h.known_at} is after now (${nowIso}): logs accepted later are not known yet; leave ${name} out to read everything accepted so far`;
  throw new AppError("validation", message, [fieldIssue([...where, name], message, h.known_at)]);
}

/**
 * State reads at a horizon (`as_of`, `known_at`): the patient's log read from JetStream
 * and folded afresh (readmodels/as-of.ts), so the answer is exactly the fold of the logs
 * within the horizon. The read covers every log stored when it starts, so it needs no
 * read-your-writes wait; `applied_seq` is the last stream sequence read. Authorized as
 * the plain reads are (StateReader.authorize); the patient record's time zone and date
 * of birth are today's, as they are not logs.
 */
export class HorizonReader {
  private readonly log: PatientLog;

  constructor(private readonly deps: { reader: StateReader; log: PatientLogDeps }) {
    this.log = new PatientLog(deps.log);
  }

  async snapshot(principal: Principal, patientId: string, h: Horizon): Promise<HorizonSnapshot> {
    return (await this.snapshots(principal, patientId, [h]))[0]!;
  }

  /** The snapshot at `h`; without a horizon, the plain read `plain` (the cached state). */
  async orPlain(principal: Principal, patientId: string, h: Horizon | undefined, plain: () => Promise<Snapshot>): Promise<Snapshot> {
    return h ? this.snapshot(principal, patientId, h) : plain();
  }

  /**
   * A view at `h`, rendered from the folded state by the one renderer (never cached: it is
   * not the current state); without a horizon, StateReader.viewOf.
   */
  async view(principal: Principal, patientId: string, viewType: string, h: Horizon | undefined): Promise<{ snap: Snapshot; view: View }> {
    assertViewType(viewType);
    if (!h) return this.deps.reader.viewOf(principal, patientId, viewType);
    const snap = await this.snapshot(principal, patientId, h);
    return { snap, view: renderView(viewType, snap.stored.state, horizonTime(h, this.deps.reader.now())) };
  }

  /** Every view at `h` (rendered as `view` renders one); without a horizon, the plain read's. */
  async allViews(principal: Principal, patientId: string, h: Horizon | undefined): Promise<{ snap: Snapshot; views: View[] }> {
    const { reader } = this.deps;
    if (!h) {
      const snap = await reader.snapshot(principal, patientId);
      return { snap, views: await reader.allViews(snap.stored) };
    }
    const snap = await this.snapshot(principal, patientId, h);
    const at = horizonTime(h, reader.now());
    return { snap, views: VIEW_TYPES.map((t) => renderView(t, snap.stored.state, at)) };
  }

  /** Several horizons from one read of the log (a diff's two states). */
  async snapshots(principal: Principal, patientId: string, hs: readonly Horizon[]): Promise<HorizonSnapshot[]> {
    return (await this.folded(principal, patientId, hs)).snapshots;
  }

  /**
   * The states at `hs` from one read of the log, with the logs read (for what happened
   * between two horizons: get_changes).
   */
  async folded(principal: Principal, patientId: string, hs: readonly Horizon[]): Promise<{ snapshots: HorizonSnapshot[]; logs: LogRecord[] }> {
    const { base, logs, seq } = await this.history(principal, patientId);
    const states = statesAt(base.state, logs, hs);
    return { snapshots: states.map((state: PatientState, i) => ({ stored: { ...base, state, applied_seq: seq }, current: true, horizon: hs[i]! })), logs };
  }

  /**
   * The authorized patient, every log stored for it (stream order) with the last sequence
   * read, and the empty state its folds start from: the patient record's fields as today.
   */
  async history(principal: Principal, patientId: string): Promise<{ patient: Patient; base: StoredPatientState; logs: LogRecord[]; seq: number }> {
    const patient = await this.deps.reader.authorize(principal, patientId);
    const owner = { organization_id: principal.organization_id, project_id: principal.project_id, patient_id: patient.id };
    const logs: LogRecord[] = [];
    let seq = 0;
    for await (const m of this.log.read(owner)) {
      for (const l of m.data.logs) logs.push(l);
      seq = m.seq;
    }
    return { patient, base: emptyStored(patient.id, patient.timezone, owner.organization_id, owner.project_id, patient.date_of_birth), logs, seq };
  }
}
