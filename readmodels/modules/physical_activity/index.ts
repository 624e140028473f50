import type { LogPayloads } from "../../../catalog/payloads.js";
import { DAYS, insertSorted, RECENT } from "../../lib/lists.js";
import { finite, items, record, round, text, type Obj } from "../../lib/payload.js";
import { dayOf } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";
import { numbersOf, periodKey, putPeriod, sumOf, withoutReplaced, type PeriodPart } from "../../lib/periods.js";

type Payload = LogPayloads["activity_data"];

const SUMMED = [
  "steps", "walks", "walking_minutes", "active_minutes", "sedentary_minutes", "calories_total", "calories_active", "floors_climbed",
] as const satisfies readonly (keyof Payload)[];

const GIVEN = [...SUMMED, "time_at_home_percent"] as const satisfies readonly (keyof Payload)[];

/** What one activity_data log gives its day: the SUMMED fields, distance_m, exercise_sessions (a count), time_at_home_percent. */
export type ActivityValues = Partial<Record<(typeof SUMMED)[number] | "distance_m" | "exercise_sessions" | "time_at_home_percent", number>>;

/**
 * Sums over the day's measurement periods (null: no period of the day gave the field). A
 * period re-sent (same device_provider and period start, or the same local_date for a
 * summary without a period) replaces its earlier log instead of adding to it.
 */
export interface ActivityDay {
  /** YYYY-MM-DD: the event's local_date, else its period start's date in the patient's timezone. */
  date: string;
  /** Number of distinct measurement periods. */
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
  /** The latest log of each measurement period of the day, by event time: what the sums are made of. */
  periods: PeriodPart<ActivityValues>[];
}

export interface ActivityEntry {
  timestamp: string;
  log_id: string;
  date: string;
  period: Obj | null;
  device_provider: string | null;
  steps: number | null;
  active_minutes: number | null;
  /** null when no distance was sent or its unit is not a length (see distance_travelled). */
  distance_m: number | null;
  /** As sent: {value, unit}. */
  distance_travelled: Obj | null;
}

export interface PhysicalActivityDoc {
  /** Daily rollups, ascending by date, the last 90 days. */
  days: ActivityDay[];
  /** The last 50 events by event time; a re-sent period's earlier log is no longer listed. */
  recent: ActivityEntry[];
}

const LENGTHS: [number, string[]][] = [
  [1, ["m", "meter", "meters", "metre", "metres"]],
  [1000, ["km", "kilometer", "kilometers", "kilometre", "kilometres"]],
  [1609.344, ["mi", "mile", "miles"]],
  [0.9144, ["yd", "yds", "yard", "yards"]],
  [0.3048, ["ft", "foot", "feet"]],
];
const METRES_PER = new Map(LENGTHS.flatMap(([m, names]) => names.map((n) => [n, m] as const)));

/**
 * distance_travelled in metres. A unit that is not a length we know ("steps", a typo) is
 * not converted: guessing metres would put a kilometre figure into the totals a thousand
 * times too small. The log keeps the value and unit as sent. No unit at all reads as metres.
 */
export function distanceM(p: Pick<Payload, "distance_travelled">): number | undefined {
  const d = record(p.distance_travelled);
  const value = finite(d?.value);
  if (!d || value === undefined) return undefined;
  const factor = METRES_PER.get((text(d.unit) ?? "m").trim().toLowerCase());
  return factor === undefined ? undefined : round(value * factor);
}

function rollup(date: string, periods: PeriodPart<ActivityValues>[]): ActivityDay {
  const day: ActivityDay = {
    date, entries: periods.length, steps: null, walks: null, walking_minutes: null, active_minutes: null, sedentary_minutes: null,
    distance_m: null, calories_total: null, calories_active: null, floors_climbed: null, exercise_sessions: null,
    time_at_home_percent: null, periods,
  };
  for (const k of SUMMED) day[k] = sumOf(periods, k);
  day.distance_m = sumOf(periods, "distance_m");
  day.exercise_sessions = sumOf(periods, "exercise_sessions");
  // A share, not a sum: the latest period that gave it (periods are in event-time order).
  for (const x of periods) day.time_at_home_percent = x.values.time_at_home_percent ?? day.time_at_home_percent;
  return day;
}

export const handles = ["activity_data"] as const;

export const physicalActivity: ReadModel<"physical_activity", PhysicalActivityDoc, "activity_data"> = {
  key: "physical_activity",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ days: [], recent: [] }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const period = record(p.period) ?? null;
    const date = dayOf(text(p.local_date), text(period?.start_datetime) ?? log.timestamp, ctx.timezone);
    const distance = distanceM(p);
    const values: ActivityValues = numbersOf(p, GIVEN);
    if (distance !== undefined) values.distance_m = distance;
    if (Array.isArray(p.exercise_sessions)) values.exercise_sessions = items(p.exercise_sessions).length;
    const put = putPeriod(s.doc.days, date, { key: periodKey(p, log.id), timestamp: log.timestamp, log_id: log.id, values }, rollup, DAYS);
    if (put === null) return s;
    const entry: ActivityEntry = {
      timestamp: log.timestamp, log_id: log.id, date, period, device_provider: text(p.device_provider) ?? null,
      steps: finite(p.steps) ?? null, active_minutes: finite(p.active_minutes) ?? null, distance_m: distance ?? null,
      distance_travelled: record(p.distance_travelled) ?? null,
    };
    return withDoc(s, { days: put.days, recent: insertSorted(withoutReplaced(s.doc.recent, put), entry, RECENT) });
  },
};
