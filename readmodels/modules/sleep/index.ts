import type { LogPayloads } from "../../../catalog/payloads.js";
import { DAYS, insertSorted, RECENT } from "../../lib/lists.js";
import { record, str, text, type Obj } from "../../lib/payload.js";
import { cmpTime, dayOf, utcInstant } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";
import { numbersOf, periodKey, putPeriod, sumOf, withoutReplaced, type PeriodPart } from "../../lib/periods.js";

const MINUTES = [
  "total_sleep_minutes", "deep_sleep_minutes", "rem_sleep_minutes", "light_sleep_minutes", "awake_minutes",
] as const satisfies readonly (keyof LogPayloads["sleep_data"])[];

export type SleepValues = Partial<Record<(typeof MINUTES)[number], number>>;

/**
 * Sums over the sleep sessions attributed to one day (null: no session gave the field). A
 * session re-sent (same device_provider and period start) replaces its earlier log.
 */
export interface SleepDay {
  /** YYYY-MM-DD: local_date when given, else the date the session ended (woke up) in the patient's timezone. */
  date: string;
  /** Number of distinct sessions. */
  sessions: number;
  total_sleep_minutes: number | null;
  deep_sleep_minutes: number | null;
  rem_sleep_minutes: number | null;
  light_sleep_minutes: number | null;
  awake_minutes: number | null;
  /** The latest log of each session of the day, by event time: what the sums are made of. */
  periods: PeriodPart<SleepValues>[];
}

export interface SleepSession {
  timestamp: string;
  log_id: string;
  date: string;
  period: Obj | null;
  device_provider: string | null;
  total_sleep_minutes: number | null;
  deep_sleep_minutes: number | null;
  rem_sleep_minutes: number | null;
  light_sleep_minutes: number | null;
  awake_minutes: number | null;
}

export interface SleepDoc {
  /** Daily rollups, ascending by date, the last 90 days. */
  days: SleepDay[];
  /** The last 50 sessions by event time; a re-sent session's earlier log is no longer listed. */
  recent: SleepSession[];
  /** The session that ended last (period end, else start, else the log's timestamp); its own re-sent log replaces it. */
  latest: SleepSession | null;
}

function rollup(date: string, periods: PeriodPart<SleepValues>[]): SleepDay {
  const day: SleepDay = {
    date, sessions: periods.length, total_sleep_minutes: null, deep_sleep_minutes: null, rem_sleep_minutes: null,
    light_sleep_minutes: null, awake_minutes: null, periods,
  };
  for (const k of MINUTES) day[k] = sumOf(periods, k);
  return day;
}

/** When a session ended: a device re-sends old nights, so the log's timestamp says nothing of which night is the latest. */
function endOf(x: SleepSession): string {
  const given = x.period && (str(x.period, "end_datetime") ?? str(x.period, "start_datetime"));
  return given === undefined || given === null ? x.timestamp : utcInstant(given);
}

export const handles = ["sleep_data"] as const;

export const sleep: ReadModel<"sleep", SleepDoc, "sleep_data"> = {
  key: "sleep",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ days: [], recent: [], latest: null }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const period = record(p.period) ?? null;
    // A night belongs to the day one wakes up on: a session from 23:00 to 07:00 is that morning's sleep.
    // local_date is not a sleep_data field of the catalog, but a session that carries one is put on that day.
    const date = dayOf(str(p, "local_date"), text(period?.end_datetime) ?? log.timestamp, ctx.timezone);
    const values: SleepValues = numbersOf(p, MINUTES);
    const put = putPeriod(s.doc.days, date, { key: periodKey(p, log.id), timestamp: log.timestamp, log_id: log.id, values }, rollup, DAYS);
    if (put === null) return s;
    const session: SleepSession = {
      timestamp: log.timestamp, log_id: log.id, date, period, device_provider: text(p.device_provider) ?? null,
      total_sleep_minutes: values.total_sleep_minutes ?? null, deep_sleep_minutes: values.deep_sleep_minutes ?? null,
      rem_sleep_minutes: values.rem_sleep_minutes ?? null, light_sleep_minutes: values.light_sleep_minutes ?? null,
      awake_minutes: values.awake_minutes ?? null,
    };
    const replaced = put.replaced?.log_id;
    const prev = s.doc.latest;
    const latest = prev && prev.log_id !== replaced && cmpTime(endOf(prev), endOf(session)) > 0 ? prev : session;
    return withDoc(s, { days: put.days, recent: insertSorted(withoutReplaced(s.doc.recent, put), session, RECENT), latest });
  },
};
