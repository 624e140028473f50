import type { LogType } from "../../../src/catalog/log-types.js";
import { addNum, upsertDay } from "../../lib/daily.js";
import { insertSorted, RECENT } from "../../lib/lists.js";
import { num, obj, str, type Obj } from "../../lib/payload.js";
import { cmpStamped, dayOf } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

/** Sums over the sleep sessions attributed to one day (null: no session gave the field). */
export interface SleepDay {
  /** YYYY-MM-DD: local_date when given, else the date the session ended (woke up) in the patient's timezone. */
  date: string;
  sessions: number;
  total_sleep_minutes: number | null;
  deep_sleep_minutes: number | null;
  rem_sleep_minutes: number | null;
  light_sleep_minutes: number | null;
  awake_minutes: number | null;
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
  /** The last 50 sessions by event time. */
  recent: SleepSession[];
  latest: SleepSession | null;
}

const MINUTES = ["total_sleep_minutes", "deep_sleep_minutes", "rem_sleep_minutes", "light_sleep_minutes", "awake_minutes"] as const;

export const handles: readonly LogType[] = ["sleep_data"];

export const sleep: ReadModel<"sleep", SleepDoc> = {
  key: "sleep",
  kind: "event",
  version: 1,
  handles,
  reads: [],
  initial: () => ({ days: [], recent: [], latest: null }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const period = obj(p, "period") ?? null;
    // A night belongs to the day one wakes up on: a session from 23:00 to 07:00 is that morning's sleep.
    const date = dayOf(str(p, "local_date"), (period && str(period, "end_datetime")) ?? log.timestamp, ctx.timezone);
    const days = upsertDay(
      s.doc.days,
      date,
      () => ({ date, sessions: 0, total_sleep_minutes: null, deep_sleep_minutes: null, rem_sleep_minutes: null, light_sleep_minutes: null, awake_minutes: null }),
      (d) => {
        const next = { ...d, sessions: d.sessions + 1 };
        for (const k of MINUTES) next[k] = addNum(d[k], num(p, k));
        return next;
      },
    );
    const session = {
      timestamp: log.timestamp, log_id: log.id, date, period, device_provider: str(p, "device_provider") ?? null,
      ...(Object.fromEntries(MINUTES.map((k) => [k, num(p, k) ?? null])) as Record<(typeof MINUTES)[number], number | null>),
    };
    const latest = s.doc.latest && cmpStamped(s.doc.latest, session) > 0 ? s.doc.latest : session;
    return withDoc(s, { days, recent: insertSorted(s.doc.recent, session, RECENT), latest });
  },
};
