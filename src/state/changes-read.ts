import { changesSummary, clinicalChanges, inWindow, type ClinicalChanges } from "../../readmodels/changes/index.js";
import type { Principal } from "../auth/scopes.js";
import { AppError, fieldIssue } from "../errors.js";
import type { HorizonReader } from "./as-of-read.js";

/** The answer of GET /v1/state/{pid}/changes and of get_changes. */
export interface ChangesAnswer extends ClinicalChanges {
  patient_id: string;
  since: string;
  until: string;
  /** What the answer holds, or that nothing relevant changed. */
  summary: string;
  /** The logs with an event time in the window, by type: what the changes were read from. */
  logs_in_window: { total: number; by_type: Record<string, number> };
}

/**
 * What changed for a patient after `since` up to `until` (both UTC instants, by event
 * time): the patient's log read once, folded to both ends, compared by domain. `where`
 * locates since in an error ("query" for REST, "arguments" for MCP).
 */
export async function readChanges(
  horizon: HorizonReader, principal: Principal, patientId: string, since: string, until: string, where: string,
): Promise<{ answer: ChangesAnswer; applied_seq: number }> {
  if (since > until) {
    const message = `since ${since} is after until ${until}: since is the start of the window; swap them, or leave until out for now`;
    throw new AppError("validation", message, [fieldIssue([where, "since"], message, since)]);
  }
  const w = { since, until };
  const { snapshots, logs } = await horizon.folded(principal, patientId, [{ as_of: since }, { as_of: until }]);
  const [before, after] = snapshots;
  const inside = logs.filter((l) => inWindow(l.timestamp, w));
  const by_type: Record<string, number> = {};
  for (const l of inside) by_type[l.log_type] = (by_type[l.log_type] ?? 0) + 1;
  const changes = clinicalChanges(before!.stored.state, after!.stored.state, w, inside);
  return {
    answer: { patient_id: patientId, since, until, summary: changesSummary(changes), logs_in_window: { total: inside.length, by_type }, ...changes },
    applied_seq: after!.stored.applied_seq,
  };
}
