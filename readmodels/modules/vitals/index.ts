import type { LogType } from "../../../catalog/log-types.js";
import { addStat, upsertDay, type Stat } from "../../lib/daily.js";
import { insertSorted } from "../../lib/lists.js";
import { num, obj, str, type Obj } from "../../lib/payload.js";
import { cmpStamped, dayOf, utcInstant } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

/** Measurement names: the vitals_measurement fields, and weight_measurement's weight_kg, body_fat_percent, bmi. */
export const VITALS = [
  "systolic_bp_mmhg", "diastolic_bp_mmhg", "heart_rate_bpm", "spo2_percent", "weight_kg", "temperature_celsius",
  "respiratory_rate_bpm",
] as const;
export const WEIGHT = ["weight_kg", "body_fat_percent", "bmi"] as const;

export interface LatestValue {
  value: number;
  /** When measured: collection_datetime or sensor_timestamp, else the log's timestamp. */
  timestamp: string;
  log_id: string;
}

export interface VitalsEntry {
  timestamp: string;
  log_id: string;
  log_type: "vitals_measurement" | "weight_measurement";
  /** The non-null measurements of the log, by name. */
  measurements: Record<string, number>;
  /** vitals_measurement: position, fasting. */
  context: Obj | null;
  device_provider: string | null;
  /** The payload's source (null when none) and extensions (`{}` when none), as sent. */
  source: unknown;
  extensions: Obj;
}

export interface WeightDay {
  date: string;
  weight_kg: Stat | null;
}

export interface VitalsDoc {
  /** Per measurement name, the value measured last (by measurement time, then log id). */
  latest: Record<string, LatestValue>;
  /** The last 100 measurement events by measurement time. */
  history: VitalsEntry[];
  /** Weight per day (local_date, else the date in the patient's timezone), the last 90 days. */
  daily_weight: WeightDay[];
}

export const HISTORY_MAX = 100;

export const handles: readonly LogType[] = ["vitals_measurement", "weight_measurement"];

export const vitals: ReadModel<"vitals", VitalsDoc> = {
  key: "vitals",
  kind: "event",
  version: 3,
  handles,
  reads: [],
  initial: () => ({ latest: {}, history: [], daily_weight: [] }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const weight = log.log_type === "weight_measurement";
    const source = weight ? p : (obj(p, "measurements") ?? {});
    const measurements: Record<string, number> = {};
    for (const k of weight ? WEIGHT : VITALS) {
      const v = num(source, k);
      if (v !== undefined) measurements[k] = v;
    }
    if (Object.keys(measurements).length === 0) return s;
    const given = str(p, "collection_datetime") ?? str(p, "sensor_timestamp");
    const timestamp = given === undefined ? log.timestamp : utcInstant(given);
    const entry: VitalsEntry = {
      timestamp, log_id: log.id, log_type: weight ? "weight_measurement" : "vitals_measurement", measurements,
      context: obj(p, "context") ?? null, device_provider: str(p, "device_provider") ?? null,
      source: p.source ?? null, extensions: obj(p, "extensions") ?? {},
    };
    const latest = { ...s.doc.latest };
    for (const [name, value] of Object.entries(measurements)) {
      const prev = latest[name];
      if (!prev || cmpStamped(prev, entry) <= 0) latest[name] = { value, timestamp, log_id: log.id };
    }
    const kg = measurements.weight_kg;
    const date = dayOf(str(p, "local_date"), timestamp, ctx.timezone);
    const daily_weight =
      kg === undefined
        ? s.doc.daily_weight
        : upsertDay(s.doc.daily_weight, date, () => ({ date, weight_kg: null }), (d) => ({ ...d, weight_kg: addStat(d.weight_kg, kg) }));
    return withDoc(s, { latest, history: insertSorted(s.doc.history, entry, HISTORY_MAX), daily_weight });
  },
};
