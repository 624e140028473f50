import { cmpStamped, type Stamped } from "./time.js";
import type { LogRecord } from "../log-record.js";

/** Default bound of a recent window. */
export const RECENT = 50;
/** Default bound of one entity's history. */
export const HISTORY = 50;
/** Default number of days kept in a daily rollup. */
export const DAYS = 90;
/** Sources kept per fact. */
export const SOURCES = 10;

/**
 * Inserts an item into a list sorted by timestamp and keeps the last `max`. An item goes
 * after those with an equal timestamp, so ties keep fold order (see cmpStamped), and
 * several items of one log keep their payload order. Because the fold applies a
 * patient's logs in one order whatever order they arrived in, the list's content is the
 * same for any arrival order.
 */
export function insertSorted<T extends Stamped>(list: readonly T[], item: T, max: number): T[] {
  let i = list.length;
  while (i > 0 && cmpStamped(list[i - 1]!, item) > 0) i--;
  // Appending (the usual case: logs mostly come in time order) copies the list once.
  const drop = Math.max(0, list.length + 1 - max);
  if (i === list.length) {
    const out = list.slice(drop);
    out.push(item);
    return out;
  }
  const out = [...list.slice(0, i), item, ...list.slice(i)];
  return drop > 0 ? out.slice(drop) : out;
}

/** The last item of a sorted list: the latest by event time. */
export function last<T>(list: readonly T[]): T | undefined {
  return list[list.length - 1];
}

/** Who asserted a fact, and through which log. `source` is the payload's own source, or null. */
export interface SourceRef {
  source: unknown;
  log_id: string;
  timestamp: string;
}

export function addSource(list: readonly SourceRef[] | undefined, log: LogRecord, source?: unknown): SourceRef[] {
  const ref: SourceRef = { source: source ?? log.payload.source ?? null, log_id: log.id, timestamp: log.timestamp };
  return insertSorted(list ?? [], ref, SOURCES);
}

/** Replaces item i (or appends when i < 0), without touching the input. */
export function replaceAt<T>(list: readonly T[], i: number, item: T): T[] {
  if (i < 0) return [...list, item];
  const out = [...list];
  out[i] = item;
  return out;
}

export function removeAt<T>(list: readonly T[], i: number): T[] {
  return i < 0 ? [...list] : [...list.slice(0, i), ...list.slice(i + 1)];
}
