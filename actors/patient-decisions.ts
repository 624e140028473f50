import { MODEL_FINGERPRINT, type StoredPatientState } from "../infra/redis/state-store.js";

/**
 * The patient actor's decisions, apart from the I/O they lead to: what a load does with
 * what Redis holds, and whether a batch is folded on the state or the history decides.
 */

/** What a patient's load does: use the stored state, start empty (a new patient), or compile the whole history. */
export type LoadPlan = { kind: "use"; stored: StoredPatientState } | { kind: "new-if-first" } | { kind: "replay" };

export function loadPlan(stored: StoredPatientState | null, o: { forced: boolean; firstQueuedSeq: number | null }): LoadPlan {
  // The last actor failed (or a reader asked for a rebuild): the stream decides, not Redis.
  if (o.forced) return { kind: "replay" };
  if (stored) return stored.fingerprint === MODEL_FINGERPRINT ? { kind: "use", stored } : { kind: "replay" };
  // Nothing stored: a new patient when its first stored message is the first one waiting
  // (one direct get tells); otherwise Redis lost it.
  return o.firstQueuedSeq !== null ? { kind: "new-if-first" } : { kind: "replay" };
}

/**
 * Whether a batch folded on the state may be saved as it is, or the patient's whole
 * history must decide: a late log (it sorts before one already applied), or a redelivery
 * (it may have overtaken an earlier message, or a member whose lease lapsed may have saved
 * past it without it).
 */
export function batchNeedsReplay(folded: { late: boolean }, batch: readonly { redelivered: boolean }[]): boolean {
  return folded.late || batch.some((d) => d.redelivered);
}
