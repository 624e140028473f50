/**
 * Scheduled medications taken off the list. The medications module forgets a deleted
 * entry, but the doses it missed while listed were still missed: without this the
 * schedule, /changes, the provider alert and the views lost them the moment it was removed.
 */
import { actionOf } from "../../lib/entities.js";
import { identityKey } from "../../lib/identity.js";
import { items, text } from "../../lib/payload.js";
import { timeMs } from "../../lib/time.js";
import type { LogOf } from "../../log-record.js";
import { findMedication, type Medication, type MedicationsDoc } from "../medications/index.js";

/** Days a removal is kept after it: the tracked week and the day of margin history keeps. */
const KEEP_DAYS = 8;
const DAY_MS = 86_400_000;

export interface RemovedMedication {
  /** The listing as it stood before the removal: its schedule, window, start and sources. */
  medication: Medication;
  /** The removing list update's time: scheduled times from then on are not expected. */
  removed_at: string;
  log_id: string;
}

export const removedKey = (m: Pick<Medication, "rxnorm_cui" | "medication_name">): string =>
  identityKey({ codes: [m.rxnorm_cui], name: m.medication_name });

/**
 * The removals with those a list update makes, read against the list before it (what the
 * module context gives). Only medications with schedule_times: the rest have nothing to lay out.
 */
export function noteRemovals(
  prev: readonly RemovedMedication[], before: Readonly<MedicationsDoc> | undefined, log: LogOf<"medication_list_update">,
): readonly RemovedMedication[] {
  let out = prev;
  for (const item of items(log.payload.medications)) {
    if (actionOf(item) !== "remove") continue;
    const m = findMedication(before, { rxnorm_cui: text(item.rxnorm_cui) ?? null, medication_name: text(item.medication_name) ?? null });
    if (!m || (m.schedule_times ?? []).length === 0) continue;
    // Each removal ends a listing of its own (only a listed medication can be removed): one listed again and removed keeps both.
    out = [...out, { medication: m, removed_at: log.timestamp, log_id: log.id }];
  }
  return out;
}

/**
 * The removals still to lay out at `until`: removed within the tracked week and a day,
 * listed again or not (the doses missed under the earlier listing stay missed). In
 * removal order. Returns `prev` when none is dropped.
 */
export function endedMedications(prev: readonly RemovedMedication[], until: string): readonly RemovedMedication[] {
  const cutoff = timeMs(until) - KEEP_DAYS * DAY_MS;
  const kept = prev.filter((r) => timeMs(r.removed_at) > cutoff);
  return kept.length === prev.length ? prev : kept;
}

/** One listing per medication no longer listed, for its schedule history: its latest removed one. */
export function unlistedMedications(ended: readonly RemovedMedication[], meds: Readonly<MedicationsDoc> | undefined): Medication[] {
  const listed = new Set((meds?.medications ?? []).map(removedKey));
  return [...new Map(ended.filter((r) => !listed.has(removedKey(r.medication))).map((r) => [removedKey(r.medication), r.medication])).values()];
}
