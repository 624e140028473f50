import { addStat, upsertDay, type Stat } from "../../lib/daily.js";
import { insertSorted, RECENT } from "../../lib/lists.js";
import { finite, round, str, text } from "../../lib/payload.js";
import { cmpTime, dayOf, utcInstant } from "../../lib/time.js";
import { withDoc, type ReadModel } from "../../module.js";

/** Consensus CGM target range (mg/dL), used when a reading carries no glucose_flag. */
export const TARGET_LOW_MG_DL = 70;
export const TARGET_HIGH_MG_DL = 180;

export interface GlucoseDay {
  /** YYYY-MM-DD: local_date when given, else sensor_timestamp's date in the patient's timezone. */
  date: string;
  glucose_mg_dl: Stat | null;
  readings: number;
  low: number;
  high: number;
  in_range: number;
  /** in_range / readings, percent, 1 decimal. */
  time_in_range_percent: number;
}

export interface GlucoseReading {
  timestamp: string;
  log_id: string;
  sensor_timestamp: string | null;
  glucose_mg_dl: number;
  trend_arrow: string | null;
  /** As sent, else derived from the 70–180 mg/dL range. */
  glucose_flag: "low" | "normal" | "high";
  device_provider: string | null;
}

export interface GlucoseDoc {
  /** Daily rollups, ascending by date, the last 90 days. */
  days: GlucoseDay[];
  /** The last 50 readings by event time. */
  recent: GlucoseReading[];
  /** The reading taken last, by sensor_timestamp (else the log's timestamp). */
  latest: GlucoseReading | null;
}

/** When a reading was taken. A receiver uploads backfilled readings late, so the log's timestamp can be long after. */
const takenAt = (r: GlucoseReading) => (r.sensor_timestamp === null ? r.timestamp : utcInstant(r.sensor_timestamp));

/** The reading's flag as sent (anything but the three flags reads as none), else against the target range. */
function flagOf(flag: string | undefined, v: number): GlucoseReading["glucose_flag"] {
  if (flag === "low" || flag === "normal" || flag === "high") return flag;
  return v < TARGET_LOW_MG_DL ? "low" : v > TARGET_HIGH_MG_DL ? "high" : "normal";
}

export const handles = ["cgm_reading"] as const;

export const glucose: ReadModel<"glucose", GlucoseDoc, "cgm_reading"> = {
  key: "glucose",
  kind: "event",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ days: [], recent: [], latest: null }),
  evolve: (s, log, ctx) => {
    const p = log.payload;
    const value = finite(p.glucose_mg_dl);
    if (value === undefined) return s;
    const sensor = text(p.sensor_timestamp) ?? null;
    // local_date is not a cgm_reading field of the catalog, but a reading that carries one is put on that day, as every device reading is.
    const date = dayOf(str(p, "local_date"), sensor ?? log.timestamp, ctx.timezone);
    const reading: GlucoseReading = {
      timestamp: log.timestamp, log_id: log.id, sensor_timestamp: sensor, glucose_mg_dl: value,
      trend_arrow: text(p.trend_arrow) ?? null, glucose_flag: flagOf(p.glucose_flag, value),
      device_provider: text(p.device_provider) ?? null,
    };
    const days = upsertDay(
      s.doc.days,
      date,
      () => ({ date, glucose_mg_dl: null, readings: 0, low: 0, high: 0, in_range: 0, time_in_range_percent: 0 }),
      (d) => {
        const next = { ...d, glucose_mg_dl: addStat(d.glucose_mg_dl, value), readings: d.readings + 1 };
        if (reading.glucose_flag === "low") next.low++;
        else if (reading.glucose_flag === "high") next.high++;
        else next.in_range++;
        next.time_in_range_percent = round((next.in_range / next.readings) * 100, 1);
        return next;
      },
    );
    const latest = s.doc.latest && cmpTime(takenAt(s.doc.latest), takenAt(reading)) > 0 ? s.doc.latest : reading;
    return withDoc(s, { days, recent: insertSorted(s.doc.recent, reading, RECENT), latest });
  },
};
