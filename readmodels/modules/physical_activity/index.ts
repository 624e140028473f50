import type { LogType } from "../../../src/catalog/log-types.js";
import { addNum, upsertDay } from "../../lib/daily.js";
import { insertSorted, RECENT } from "../../lib/lists.js";
import { num, obj, objs, str, round, type Obj } from "../../lib/payload.js";
import { dayOf } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

/** Sums over the day's activity_data events (null: no event of the day gave the field). */
export interface ActivityDay {
  /** YYYY-MM-DD: the event's local_date, else its period start's date in the patient's timezone. */
  date: string;
  entries: number;
  steps: number | null;
  walks: number | null;
  walking_minutes: number | null;
  active_minutes: number | null;
  sedentary_minutes: number | null;
  distance_m: number | null;
  calories_total: number | null;
  calories_active: number | null;
  floors_climbed: number | null;
  exercise_sessions: number | null;
  /** Latest event's value of the day (a share, not summable). */
  time_at_home_percent: number | null;
}

export interface ActivityEntry {
  timestamp: string;
  log_id: string;
  date: string;
  period: Obj | null;
  device_provider: string | null;
  steps: number | null;
  active_minutes: number | null;
  distance_m: number | null;
}

export interface PhysicalActivityDoc {
  /** Daily rollups, ascending by date, the last 90 days. */
  days: ActivityDay[];
  /** The last 50 events by event time. */
  recent: ActivityEntry[];
}

const METRES_PER: Record<string, number> = {
  m: 1, meter: 1, meters: 1, metre: 1, metres: 1, km: 1000, kilometers: 1000, kilometres: 1000,
  ft: 0.3048, foot: 0.3048, feet: 0.3048, mi: 1609.344, mile: 1609.344, miles: 1609.344, yd: 0.9144, yards: 0.9144,
};

/** distance_travelled in metres; an unknown unit is taken as metres rather than dropped. */
function distanceM(p: Obj): number | undefined {
  const d = obj(p, "distance_travelled");
  const value = d && num(d, "value");
  if (!d || value === undefined) return undefined;
  return round(value * (METRES_PER[(str(d, "unit") ?? "m").toLowerCase()] ?? 1));
}

const SUMMED = ["steps", "walks", "walking_minutes", "active_minutes", "sedentary_minutes", "calories_total", "calories_active", "floors_climbed"] as const;

const blankDay = (date: string) => (): ActivityDay => ({
  date, entries: 0, steps: null, walks: null, walking_minutes: null, active_minutes: null, sedentary_minutes: null,
  distance_m: null, calories_total: null, calories_active: null, floors_climbed: null, exercise_sessions: null,
  time_at_home_percent: null,
});

export const handles: readonly LogType[] = ["activity_data"];

export const physicalActivity: ReadModel<"physical_activity", PhysicalActivityDoc> = {
  key: "physical_activity",
  kind: "event",
  version: 1,
  handles,
  reads: [],
  initial: () => ({ days: [], recent: [] }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const period = obj(p, "period") ?? null;
    const date = dayOf(str(p, "local_date"), (period && str(period, "start_datetime")) ?? log.timestamp, ctx.timezone);
    const distance = distanceM(p);
    const sessions = Array.isArray(p.exercise_sessions) ? objs(p, "exercise_sessions").length : undefined;
    const days = upsertDay(s.doc.days, date, blankDay(date), (d) => {
      const next: ActivityDay = { ...d, entries: d.entries + 1 };
      for (const k of SUMMED) next[k] = addNum(d[k], num(p, k));
      next.distance_m = addNum(d.distance_m, distance);
      next.exercise_sessions = addNum(d.exercise_sessions, sessions);
      next.time_at_home_percent = num(p, "time_at_home_percent") ?? d.time_at_home_percent;
      return next;
    });
    const entry: ActivityEntry = {
      timestamp: log.timestamp, log_id: log.id, date, period, device_provider: str(p, "device_provider") ?? null,
      steps: num(p, "steps") ?? null, active_minutes: num(p, "active_minutes") ?? null, distance_m: distance ?? null,
    };
    return withDoc(s, { days, recent: insertSorted(s.doc.recent, entry, RECENT) });
  },
};
