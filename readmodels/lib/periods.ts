/**
 * Daily rollups of device summaries that a device re-sends. activity_data and sleep_data
 * carry one measurement period per event, and devices re-sync the same period (a daily
 * summary through the day, a session after re-scoring): summing every log would count it
 * twice. So a day keeps the latest log of each period and is recomputed from them, which
 * keeps it a function of the set of logs. Shared by physical_activity and sleep.
 */
import { insertSorted } from "./lists.js";
import { num, obj, str, type Obj } from "./payload.js";
import { addDays, cmpTime, utcInstant } from "./time.js";

/** The part one log contributes to a day: its measurement period's key and values. */
export interface PeriodPart<V> {
  /** device_provider and the period's start (else its end, else the local_date); see periodKey. */
  key: string;
  timestamp: string;
  log_id: string;
  /** The numbers the log gave, by field; fields it left out are absent. */
  values: V;
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Which measurement a log describes: its device_provider and where its period starts. A
 * device re-syncs a period that is still open with a later end (a daily summary during
 * the day), never a different start. A period without a start goes by its end, and a log
 * without a period but with a local_date is that day's summary. A log with none of them
 * cannot be told apart from another, so it is a measurement of its own.
 */
export function periodKey(p: Obj, logId: string): string {
  const provider = str(p, "device_provider") ?? "";
  const period = obj(p, "period");
  const start = period && str(period, "start_datetime");
  if (start !== undefined) return `${provider}|start:${utcInstant(start)}`;
  const end = period && str(period, "end_datetime");
  if (end !== undefined) return `${provider}|end:${utcInstant(end)}`;
  const localDate = str(p, "local_date");
  if (localDate !== undefined && DATE_RE.test(localDate)) return `${provider}|date:${localDate}`;
  return `log:${logId}`;
}

export interface PeriodDay<V> {
  date: string;
  periods: PeriodPart<V>[];
}

export interface PeriodUpdate<D> {
  days: D[];
  /** The earlier log of the same period that this one replaced, if any. */
  replaced: PeriodPart<unknown> | null;
}

/**
 * How far a re-sent period's day can move: its instant stays, only its local_date (or,
 * for sleep, its end) can change, and a local date is within a day of the UTC date.
 */
const MOVE_DAYS = 2;

/**
 * Puts `part` in the day `date`, replacing the part of the same key within two days of it
 * (a re-sent period moves to another day when its local_date or end changed), and
 * recomputes the days it touched with `rollup`. A part older than the one it would
 * replace changes nothing (null): the latest log of a period wins, whatever the order.
 * Equal timestamps: the part applied later wins, which is fold order. Days stay sorted by
 * date, the last `max` kept.
 */
export function putPeriod<V, D extends PeriodDay<V>>(
  days: readonly D[],
  date: string,
  part: PeriodPart<V>,
  rollup: (date: string, periods: PeriodPart<V>[]) => D,
  max: number,
): PeriodUpdate<D> | null {
  let out = [...days];
  let replaced: PeriodPart<V> | null = null;
  const lo = addDays(date, -MOVE_DAYS);
  const hi = addDays(date, MOVE_DAYS);
  for (let i = out.length - 1; i >= 0 && replaced === null; i--) {
    const day = out[i]!;
    if (day.date < lo) break;
    if (day.date > hi) continue;
    const j = day.periods.findIndex((x) => x.key === part.key);
    const same = day.periods[j];
    if (same === undefined) continue;
    if (cmpTime(same.timestamp, part.timestamp) > 0) return null;
    replaced = same;
    const rest = day.periods.filter((_, k) => k !== j);
    if (rest.length === 0) out.splice(i, 1);
    else out[i] = rollup(day.date, rest);
  }
  const i = out.findIndex((d) => d.date === date);
  const day = out[i];
  if (day !== undefined) out[i] = rollup(date, insertSorted(day.periods, part, Infinity));
  else {
    let at = out.length;
    while (at > 0 && out[at - 1]!.date > date) at--;
    out.splice(at, 0, rollup(date, [part]));
  }
  if (out.length > max) out = out.slice(out.length - max);
  return { days: out, replaced };
}

/** The sum of a field over the parts that gave it; null when none did. */
export function sumOf<V extends Partial<Record<string, number>>>(periods: readonly PeriodPart<V>[], k: keyof V): number | null {
  let s: number | null = null;
  for (const x of periods) {
    const v = x.values[k];
    if (v !== undefined) s = (s ?? 0) + (v);
  }
  return s;
}

/** The numbers a log gives for `keys`, those it left out absent: what its period adds to its day. */
export function numbersOf<K extends string>(p: Obj, keys: readonly K[]): Partial<Record<K, number>> {
  const values: Partial<Record<K, number>> = {};
  for (const k of keys) {
    const v = num(p, k);
    if (v !== undefined) values[k] = v;
  }
  return values;
}

/** A recent list without the entry of the log a re-sent period replaced (see putPeriod). */
export function withoutReplaced<E extends { log_id: string }>(recent: E[], update: PeriodUpdate<unknown>): E[] {
  const replaced = update.replaced?.log_id;
  return replaced === undefined ? recent : recent.filter((r) => r.log_id !== replaced);
}
