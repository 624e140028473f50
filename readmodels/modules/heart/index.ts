import type { LogPayloads } from "../../../catalog/payloads.js";
import { addNum, addStat, upsertDay, type Stat } from "../../lib/daily.js";
import { insertSorted, RECENT } from "../../lib/lists.js";
import type { TypedLog } from "../../log-record.js";
import { finite, isObj, record, str, text, type Obj } from "../../lib/payload.js";
import { cmpTime, dayOf, utcInstant } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

/** One day of heart data: statistics over the day's summaries and SpO2 readings. */
export interface HeartDay {
  /** YYYY-MM-DD: local_date when given, else the reading's date in the patient's timezone. */
  date: string;
  heart_rate_entries: number;
  /** Over the summaries' avg_bpm values. */
  avg_bpm: Stat | null;
  resting_bpm: Stat | null;
  min_bpm: number | null;
  max_bpm: number | null;
  hrv_sdnn_ms: Stat | null;
  irregular_events_count: number | null;
  spo2_percent: Stat | null;
}

export interface HeartEntry {
  timestamp: string;
  log_id: string;
  kind: "heart_rate" | "spo2";
  date: string;
  device_provider: string | null;
  /** heart_rate: resting_bpm, avg_bpm, min_bpm, max_bpm, avg_hrv_sdnn_ms, irregular_events_count, period.
   * spo2: spo2_percent, pulse_bpm, measurement_context, sensor_timestamp. Only the fields sent. */
  values: Obj;
}

export interface HeartDoc {
  /** Daily rollups, ascending by date, the last 90 days. */
  days: HeartDay[];
  /** The last 50 readings by event time (both kinds). */
  recent: HeartEntry[];
  /** Latest reading of each kind by when it was measured: sensor_timestamp (SpO2) or period start (heart rate), else the log's timestamp. */
  latest: { heart_rate: HeartEntry | null; spo2: HeartEntry | null };
}

const HR_FIELDS = [
  "resting_bpm", "avg_bpm", "min_bpm", "max_bpm", "avg_hrv_sdnn_ms", "irregular_events_count", "period",
] as const satisfies readonly (keyof LogPayloads["heart_rate_data"])[];
const SPO2_FIELDS = ["spo2_percent", "pulse_bpm", "measurement_context", "sensor_timestamp"] as const satisfies readonly (keyof LogPayloads["spo2_reading"])[];

const pick = (p: Obj, keys: readonly string[]): Obj => Object.fromEntries(keys.filter((k) => p[k] !== undefined).map((k) => [k, p[k]]));

const blankDay = (date: string) => (): HeartDay => ({
  date, heart_rate_entries: 0, avg_bpm: null, resting_bpm: null, min_bpm: null, max_bpm: null, hrv_sdnn_ms: null,
  irregular_events_count: null, spo2_percent: null,
});

/** When a reading was measured. Devices sync late and re-send old readings, so the log's timestamp can be long after. */
function measuredAt(e: HeartEntry): string {
  const v = e.values;
  const given = e.kind === "spo2" ? v.sensor_timestamp : isObj(v.period) ? v.period.start_datetime : undefined;
  return typeof given === "string" && given.trim() !== "" ? utcInstant(given) : e.timestamp;
}

const minOf = (a: number | null, x: number | undefined) => (x === undefined ? a : a === null ? x : Math.min(a, x));
const maxOf = (a: number | null, x: number | undefined) => (x === undefined ? a : a === null ? x : Math.max(a, x));

export const handles = ["heart_rate_data", "spo2_reading"] as const;
type HeartLog = TypedLog<(typeof handles)[number]>;

/** A day with one more reading: an SpO2 reading, or a heart rate summary. */
function addReading(d: HeartDay, log: HeartLog): HeartDay {
  if (log.log_type === "spo2_reading") return { ...d, spo2_percent: addStat(d.spo2_percent, finite(log.payload.spo2_percent)) };
  const p = log.payload;
  return {
    ...d,
    heart_rate_entries: d.heart_rate_entries + 1,
    avg_bpm: addStat(d.avg_bpm, finite(p.avg_bpm)),
    resting_bpm: addStat(d.resting_bpm, finite(p.resting_bpm)),
    min_bpm: minOf(d.min_bpm, finite(p.min_bpm)),
    max_bpm: maxOf(d.max_bpm, finite(p.max_bpm)),
    hrv_sdnn_ms: addStat(d.hrv_sdnn_ms, finite(p.avg_hrv_sdnn_ms)),
    irregular_events_count: addNum(d.irregular_events_count, finite(p.irregular_events_count)),
  };
}

export const heart: ReadModel<"heart", HeartDoc, (typeof handles)[number]> = {
  key: "heart",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ days: [], recent: [], latest: { heart_rate: null, spo2: null } }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const spo2 = log.log_type === "spo2_reading";
    const instant = log.log_type === "spo2_reading" ? text(log.payload.sensor_timestamp) : text(record(log.payload.period)?.start_datetime);
    // local_date is not a field of these types in the catalog, but a reading that carries one is put on that day, as every device reading is.
    const date = dayOf(str(p, "local_date"), instant ?? log.timestamp, ctx.timezone);
    const days = upsertDay(s.doc.days, date, blankDay(date), (d) => addReading(d, log));
    const entry: HeartEntry = {
      timestamp: log.timestamp, log_id: log.id, kind: spo2 ? "spo2" : "heart_rate", date,
      device_provider: text(p.device_provider) ?? null, values: pick(p, spo2 ? SPO2_FIELDS : HR_FIELDS),
    };
    const kind = spo2 ? "spo2" : "heart_rate";
    const prev = s.doc.latest[kind];
    const latest = prev && cmpTime(measuredAt(prev), measuredAt(entry)) > 0 ? s.doc.latest : { ...s.doc.latest, [kind]: entry };
    return withDoc(s, { days, recent: insertSorted(s.doc.recent, entry, RECENT), latest });
  },
};
