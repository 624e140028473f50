import type { Patient } from "../../src/control/patients.js";
import type { RollbackKept } from "../../src/ingestion/job-record.js";
import { MAX_PATIENT_DETAILS } from "../../src/ingestion/patient-details.js";
import { PatientLog } from "../../src/logs/patient-log.js";
import { forEachLimited, type StageDeps } from "./stage-deps.js";

/**
 * How long a rollback waits between fencing the patients it means to remove and looking at
 * their logs again: a live write that found a patient active just before the fence (or in
 * another process's cache, which follows the patients bucket within milliseconds) lands
 * in this time. @default 500 (ms)
 */
export const ROLLBACK_SETTLE_MS = 500;

export interface RollbackOutcome {
  /** Created patients erased, with their state. */
  removed: number;
  /** Created patients kept because they hold something not from this job (at most MAX_PATIENT_DETAILS listed). */
  kept: RollbackKept[];
  keptTotal: number;
  /** Created patients no longer there when the rollback began (an interrupted earlier run erased them). */
  gone: number;
}

type Scope = { organization_id: string; project_id: string };

/**
 * Removes the patients a job created, but only those that hold nothing but the job's own
 * data. It runs before REPLAYING wrote anything, so any log in a created patient's log
 * came from elsewhere (a live POST /v1/logs/batch, a FHIR write): such a patient is kept,
 * as is one updated since the job created it (updated_at moved). An accepted log must
 * never lose its patient.
 *
 * Check, fence, check again, then delete: (1) a patient with logs or changes is kept;
 * (2) the others are soft-deleted with compare-and-set on the record just checked, so
 * writes from then on find no active patient (patient_not_found) and a PUT that landed
 * meanwhile makes the fence fail; (3) after `settleMs` the log is read again and a patient
 * a write reached in between is made active again and kept; (4) the rest are erased, and
 * (5) a log that still slipped in (a write admitted before the fence, published after the
 * second look) brings the patient back from the fenced record. What remains: in that last
 * case the patient returns without a state the engine may have folded before the erase
 * (its log and record are whole; a replay of the patient rebuilds the state).
 */
export async function rollBackCreated(
  deps: StageDeps,
  scope: Scope,
  ids: readonly string[],
  signal: AbortSignal,
  settleMs = ROLLBACK_SETTLE_MS,
  onProgress: (o: RollbackOutcome) => void = () => undefined,
): Promise<RollbackOutcome> {
  const log = new PatientLog(deps.staging);
  const lastSeq = (patient_id: string) => log.lastSeq({ ...scope, patient_id });
  const out: RollbackOutcome = { removed: 0, kept: [], keptTotal: 0, gone: 0 };
  const keep = (patient_id: string, reason: RollbackKept["reason"]) => {
    out.keptTotal++;
    if (out.kept.length < MAX_PATIENT_DETAILS) out.kept.push({ patient_id, reason });
    onProgress(out);
  };
  // The record as fenced; `restore` false when it was not active before (nothing to give back).
  const fenced: { id: string; before: Patient; restore: boolean }[] = [];
  await forEachLimited(ids, 16, signal, async (id) => {
    if ((await lastSeq(id)) > 0) return keep(id, "live_logs");
    let before: Patient | null = null;
    let updated = false;
    const now = await deps.patients.modify(scope.project_id, id, (cur) => {
      before = cur;
      if (cur.updated_at !== cur.created_at && cur.status === "active") {
        updated = true;
        return undefined;
      }
      // updated_at stays: the fence is not a change a later look should take for one.
      return cur.status === "active" ? { ...cur, status: "deleted" } : undefined;
    });
    if (now === null || before === null) {
      out.gone++;
      return onProgress(out);
    }
    if (updated) return keep(id, "updated");
    fenced.push({ id, before, restore: (before as Patient).status === "active" });
  });
  if (fenced.length === 0) return out;
  if (settleMs > 0) await new Promise((r) => setTimeout(r, settleMs));
  await forEachLimited(fenced, 16, signal, async ({ id, before, restore }) => {
    if ((await lastSeq(id)) > 0) {
      if (restore) await deps.patients.modify(scope.project_id, id, (cur) => (cur.status === "deleted" && cur.updated_at === before.updated_at ? { ...cur, status: "active" } : undefined));
      return keep(id, "live_logs");
    }
    await deps.stateStore.erase(scope.project_id, id);
    await deps.patients.erase(scope.project_id, id);
    if ((await lastSeq(id)) > 0 && restore) {
      await deps.patients.create(before);
      return keep(id, "live_logs");
    }
    out.removed++;
    onProgress(out);
  });
  return out;
}
