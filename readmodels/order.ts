import type { LogRecord } from "./log-record.js";
import { cmpTime } from "./lib/time.js";

/**
 * The fold order: event timestamp (as an instant), then acceptance order. Log ids are
 * ULIDs given at acceptance, so by default they are the acceptance key; a caller that
 * has a stream sequence can pass it instead.
 */
export function compareLogsBy<L extends Pick<LogRecord, "timestamp" | "id">>(acceptanceKey: (log: L) => string | number) {
  return (a: L, b: L): number => {
    const t = cmpTime(a.timestamp, b.timestamp);
    if (t !== 0) return t;
    const x = acceptanceKey(a);
    const y = acceptanceKey(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/** (timestamp, id): the order in which a patient's logs are applied. */
export const compareLogs: (a: Pick<LogRecord, "timestamp" | "id">, b: Pick<LogRecord, "timestamp" | "id">) => number =
  compareLogsBy((l) => l.id);

/** A sorted copy (the input is left as is). */
export function sortLogs<L extends Pick<LogRecord, "timestamp" | "id">>(logs: readonly L[]): L[] {
  return [...logs].sort(compareLogs);
}
