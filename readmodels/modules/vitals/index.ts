import type { LogPayloads } from "../../../catalog/payloads.js";
import { addStat, replaceInStat, upsertDay, type Stat } from "../../lib/daily.js";
import { insertSorted } from "../../lib/lists.js";
import type { TypedLog } from "../../log-record.js";
import { extra, finite, obj, record, str, text, type Obj } from "../../lib/payload.js";
import { cmpStamped, cmpTime, dayOf, utcInstant } from "../../lib/time.js";
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
  /**
   * By measurement name, the value of an earlier log this one replaced: the same measurement
   * at the same instant is the same reading sent again (a correction), so the earlier entry
   * no longer holds it. `{}` when it replaced nothing.
   */
  replaced: Record<string, ReplacedValue>;
}

export interface ReplacedValue {
  value: number;
  log_id: string;
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

/**
 * The history without the measurements a log measures again at the same instant (an entry
 * left with none is dropped), and what it took from them. Logs at the same instant are folded
 * in acceptance order, so the later one is the correction.
 */
export function supersede(history: readonly VitalsEntry[], timestamp: string, measurements: Record<string, number>): { history: VitalsEntry[]; replaced: Record<string, ReplacedValue> } {
  const replaced: Record<string, ReplacedValue> = {};
  const kept = history.flatMap((h) => {
    if (cmpTime(h.timestamp, timestamp) !== 0) return [h];
    const names = Object.keys(h.measurements).filter((k) => measurements[k] !== undefined);
    if (names.length === 0) return [h];
    for (const k of names) replaced[k] = { value: h.measurements[k]!, log_id: h.log_id };
    const left = Object.fromEntries(Object.entries(h.measurements).filter(([k]) => measurements[k] === undefined));
    return Object.keys(left).length === 0 ? [] : [{ ...h, measurements: left }];
  });
  return { history: kept, replaced };
}

/** The weight of the day: a reading added, or (a correction) put in place of the one it replaced. */
function dayWeight(d: WeightDay, kg: number, was: number | undefined, others: () => number[]): WeightDay {
  if (was === undefined || d.weight_kg === null) return { ...d, weight_kg: addStat(d.weight_kg, kg) };
  return { ...d, weight_kg: replaceInStat(d.weight_kg, was, kg, others()) };
}

export const vitals: ReadModel<"vitals", VitalsDoc, (typeof handles)[number]> = {
  key: "vitals",
  kind: "event",
  version: 4,
  handles,
  reads: [],
  initial: () => ({ latest: {}, history: [], daily_weight: [] }),
  evolve: (s, log, ctx) => {
    const measurements = measured(log);
    if (Object.keys(measurements).length === 0) return s;
    const { given, context, device_provider, source, extensions } = takenOf(log);
    const timestamp = given === undefined ? log.timestamp : utcInstant(given);
    const measuredAgain = supersede(s.doc.history, timestamp, measurements);
    const { replaced } = measuredAgain;
    const entry: VitalsEntry = { timestamp, log_id: log.id, log_type: log.log_type, measurements, context, device_provider, source, extensions, replaced };
    const latest = { ...s.doc.latest };
    // Same instant: this log is the later one (see supersede), so it wins a tie.
    for (const [name, value] of Object.entries(measurements)) {
      const prev = latest[name];
      if (!prev || cmpStamped(prev, entry) <= 0) latest[name] = { value, timestamp, log_id: log.id };
    }
    const history = insertSorted(measuredAgain.history, entry, HISTORY_MAX);
    const kg = measurements.weight_kg;
    // local_date is a field of neither type in the catalog, but a reading that carries one is put on that day, as every device reading is.
    const date = dayOf(str(log.payload, "local_date"), timestamp, ctx.timezone);
    const othersOfDay = () => measuredAgain.history
      .filter((h) => h.measurements.weight_kg !== undefined && dayOf(undefined, h.timestamp, ctx.timezone) === date)
      .map((h) => h.measurements.weight_kg!);
    const daily_weight =
      kg === undefined
        ? s.doc.daily_weight
        : upsertDay(s.doc.daily_weight, date, () => ({ date, weight_kg: null }), (d) => dayWeight(d, kg, replaced.weight_kg?.value, othersOfDay));
    return withDoc(s, { latest, history, daily_weight });
  },
};
