import type { LogPayloads } from "../../../catalog/payloads.js";
import { addStat, upsertDay, type Stat } from "../../lib/daily.js";
import { insertSorted } from "../../lib/lists.js";
import type { TypedLog } from "../../log-record.js";
import { extra, finite, obj, record, str, text, type Obj } from "../../lib/payload.js";
import { cmpStamped, dayOf, utcInstant } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

/** Measurement names: the vitals_measurement fields, and weight_measurement's weight_kg, body_fat_percent, bmi. */
export const VITALS = [
  "systolic_bp_mmhg", "diastolic_bp_mmhg", "heart_rate_bpm", "spo2_percent", "weight_kg", "temperature_celsius",
  "respiratory_rate_bpm",
] as const satisfies readonly (keyof LogPayloads["vitals_measurement"]["measurements"])[];
export const WEIGHT = ["weight_kg", "body_fat_percent", "bmi"] as const satisfies readonly (keyof LogPayloads["weight_measurement"])[];

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

export const handles = ["vitals_measurement", "weight_measurement"] as const;
type VitalsLog = TypedLog<(typeof handles)[number]>;

/** The numbers a log measured, by name (null, or anything else but a number, is not measured). */
function measured(log: VitalsLog): Record<string, number> {
  const out: Record<string, number> = {};
  if (log.log_type === "weight_measurement") {
    for (const k of WEIGHT) {
      const v = finite(log.payload[k]);
      if (v !== undefined) out[k] = v;
    }
    return out;
  }
  const m = record(log.payload.measurements);
  if (m === undefined) return out;
  for (const k of VITALS) {
    const v = finite(m[k]);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/**
 * When and how a log measured. Both types are read by the same names, whether or not the
 * type's schema names the field, so a log that sends one is read by it: weight_measurement
 * names no collection_datetime, context or source, vitals_measurement no sensor_timestamp
 * or device_provider; those are read by key.
 */
function takenOf(log: VitalsLog): Pick<VitalsEntry, "context" | "device_provider" | "source" | "extensions"> & { given: string | undefined } {
  if (log.log_type === "weight_measurement") {
    const p = log.payload;
    return {
      given: str(p, "collection_datetime") ?? text(p.sensor_timestamp), context: obj(p, "context") ?? null,
      device_provider: text(p.device_provider) ?? null, source: extra(p, "source") ?? null, extensions: record(p.extensions) ?? {},
    };
  }
  const p = log.payload;
  return {
    given: text(p.collection_datetime) ?? str(p, "sensor_timestamp"), context: record(p.context) ?? null,
    device_provider: str(p, "device_provider") ?? null, source: p.source ?? null, extensions: record(p.extensions) ?? {},
  };
}

export const vitals: ReadModel<"vitals", VitalsDoc, (typeof handles)[number]> = {
  key: "vitals",
  kind: "event",
  version: 3,
  handles,
  reads: [],
  initial: () => ({ latest: {}, history: [], daily_weight: [] }),
  evolve: (s, log, ctx) => {
    const measurements = measured(log);
    if (Object.keys(measurements).length === 0) return s;
    const { given, context, device_provider, source, extensions } = takenOf(log);
    const timestamp = given === undefined ? log.timestamp : utcInstant(given);
    const entry: VitalsEntry = { timestamp, log_id: log.id, log_type: log.log_type, measurements, context, device_provider, source, extensions };
    const latest = { ...s.doc.latest };
    for (const [name, value] of Object.entries(measurements)) {
      const prev = latest[name];
      if (!prev || cmpStamped(prev, entry) <= 0) latest[name] = { value, timestamp, log_id: log.id };
    }
    const kg = measurements.weight_kg;
    // local_date is a field of neither type in the catalog, but a reading that carries one is put on that day, as every device reading is.
    const date = dayOf(str(log.payload, "local_date"), timestamp, ctx.timezone);
    const daily_weight =
      kg === undefined
        ? s.doc.daily_weight
        : upsertDay(s.doc.daily_weight, date, () => ({ date, weight_kg: null }), (d) => ({ ...d, weight_kg: addStat(d.weight_kg, kg) }));
    return withDoc(s, { latest, history: insertSorted(s.doc.history, entry, HISTORY_MAX), daily_weight });
  },
};
