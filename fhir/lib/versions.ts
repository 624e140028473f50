import { instantOf } from "./datatypes.js";

/**
 * What one version of a resource says about the thing it records: it holds (active, on
 * hold), it ended (resolved, stopped, completed, withdrawn), or it came back after ending
 * (a condition's recurrence).
 */
export type VersionChange = "holds" | "ended" | "returned";

/** The FHIR dates (date, dateTime or instant, as sent) that place one version in time. */
export interface VersionDates {
  /** When the thing began, first usable first (recordedDate, onset; authoredOn; effective start): every version carries the same ones. */
  since: readonly (string | undefined)[];
  /** When it ended, when the version says (abatement, effectivePeriod.end): used only for an `ended` change. */
  ended?: string;
  /** meta.lastUpdated: when the source wrote this version. */
  lastUpdated?: string;
}

/**
 * The event time of one version of a resource whose versions arrive as separate logs.
 * The modules keep, per entry, what the latest log by event time says, and every version
 * of one resource carries the same start dates; dated by them alone, two versions tie and
 * the one accepted last wins, so an older version delivered late undoes a newer one (an
 * older active Condition undid a resolution, an older active MedicationRequest brought a
 * stopped drug back). So a change is dated when it happened: an end at its own date, else
 * at the version's meta.lastUpdated; a return at its lastUpdated. A version that says the
 * thing holds stays at its start, so the state as of any time since then holds it; it
 * sorts before any end or return recorded later, whatever order they arrive in.
 */
export function versionTime(change: VersionChange, d: VersionDates): string | undefined {
  const since = d.since.map(instantOf).find((t) => t !== undefined);
  const updated = instantOf(d.lastUpdated);
  if (change === "ended") return instantOf(d.ended) ?? updated ?? since;
  if (change === "returned") return updated ?? since;
  return since ?? updated;
}
