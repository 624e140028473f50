import { useMemo } from "preact/hooks";
import type uPlot from "uplot";
import { api } from "../lib/api.js";
import { useLoad } from "../lib/use-load.js";
import type { EventModule, LogPage } from "../../../client/types.js";
import { BIN_MINUTES, BINS, clockLabel, glucoseProfile, THRESHOLDS, type Profile, type Reading } from "./glucose-stats.js";
import { TimeInRangeBar } from "./time-in-range.js";
import type { ChartProps } from "./use-event-module.js";
import { UPlotChart } from "./uplot-chart.js";

/** The consensus's period for an AGP: the 14 days up to the latest reading. */
const PERIOD_MS = 14 * 86_400_000;
/** The period is read in slices fetched side by side, each followed by its cursor (a page holds at most 500 logs). */
const SLICES = 7;

/** A sensor time as an instant: one without an offset is UTC, as the service reads it. */
const instant = (s: string) => Date.parse(/(Z|[+-]\d\d:?\d\d)$/i.test(s) ? s : `${s}Z`);

/** The glucose module's latest reading (GET .../event-modules/glucose) as of `asOf`, the AGP period's end. */
async function latestReading(pid: string, asOf: string | undefined): Promise<number | null> {
  const m = await api<EventModule>("GET", `/v1/state/${pid}/event-modules/glucose`, { query: { as_of: asOf } });
  const latest = (m.payload as { latest?: { sensor_timestamp: string | null; timestamp: string } | null }).latest;
  return latest ? instant(latest.sensor_timestamp ?? latest.timestamp) : null;
}

async function readSlice(pid: string, since: number, until: number): Promise<Reading[]> {
  const out: Reading[] = [];
  let cursor: string | undefined;
  do {
    const page = await api<LogPage>("GET", `/v1/state/${pid}/logs`, {
      query: { log_types: "cgm_reading", since: new Date(since).toISOString(), until: new Date(until).toISOString(), limit: 500, order: "asc", cursor },
    });
    for (const l of page.logs) {
      const v = l.payload.glucose_mg_dl;
      const at = instant(typeof l.payload.sensor_timestamp === "string" ? l.payload.sensor_timestamp : l.timestamp);
      if (typeof v === "number" && Number.isFinite(v) && !Number.isNaN(at)) out.push({ at, mg_dl: v });
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return out;
}

/**
 * The readings of the 14 days up to the latest: a reading is kept when taken after the
 * period's start (the log's time bounds the fetch, with a day's margin for late uploads).
 */
export async function loadReadings(pid: string, asOf?: string): Promise<{ readings: Reading[]; end: number } | null> {
  const end = await latestReading(pid, asOf);
  if (end === null) return null;
  const start = end - PERIOD_MS;
  const from = start - 86_400_000;
  // A log's event time bounds the fetch: as of a time, none after it (a late upload's reading is still kept by its sensor time).
  const to = asOf === undefined ? Date.now() + 60_000 : Date.parse(asOf);
  const step = (to - from) / SLICES;
  const slices = await Promise.all(Array.from({ length: SLICES }, (_, i) => readSlice(pid, from + i * step, from + (i + 1) * step - (i === SLICES - 1 ? 0 : 1))));
  // The slices do not overlap (until is inclusive, so each ends a millisecond before the next).
  const readings = slices.flat().filter((r) => r.at > start && r.at <= end);
  return { readings, end };
}

function agpOptions(days: number): Omit<uPlot.Options, "width" | "height"> {
  const daily: uPlot.Series[] = Array.from({ length: days }, (_, i) => ({ label: `Day ${i + 1}`, stroke: "rgba(90,90,90,0.18)", width: 1, points: { show: false } }));
  const line = (label: string, stroke: string, width: number, dash?: number[]): uPlot.Series => ({ label, stroke, width, ...(dash ? { dash } : {}), points: { show: false } });
  return {
    legend: { show: false },
    cursor: { show: true, points: { show: false } },
    scales: { x: { time: false, range: [0, 24 * 60] }, y: { range: [40, 350] } },
    axes: [
      { splits: () => [0, 180, 360, 540, 720, 900, 1080, 1260, 1440], values: (_u, splits) => splits.map((m) => clockLabel(m)) },
      { label: "mg/dL", splits: () => [THRESHOLDS.veryLow, THRESHOLDS.low, THRESHOLDS.high, THRESHOLDS.veryHigh, 350] },
    ],
    series: [
      {},
      ...daily,
      line("5th percentile", "#1d6fa5", 1, [4, 4]),
      line("25th percentile", "#1d6fa5", 1),
      line("Median", "#0b3d62", 3),
      line("75th percentile", "#1d6fa5", 1),
      line("95th percentile", "#1d6fa5", 1, [4, 4]),
      // The target range's edges.
      line("70 mg/dL", "#2e8b57", 1, [2, 3]),
      line("180 mg/dL", "#2e8b57", 1, [2, 3]),
    ],
    bands: [
      { series: [days + 5, days + 1], fill: "rgba(29,111,165,0.15)" },
      { series: [days + 4, days + 2], fill: "rgba(29,111,165,0.35)" },
    ],
  };
}

function agpData(p: Profile): uPlot.AlignedData {
  // x: each bin's middle minute; the bins' percentiles, then each day's trace under them.
  const x = Array.from({ length: BINS }, (_, i) => i * BIN_MINUTES + BIN_MINUTES / 2);
  return [x, ...p.daily, p.p5, p.p25, p.p50, p.p75, p.p95, x.map(() => THRESHOLDS.low), x.map(() => THRESHOLDS.high)] as uPlot.AlignedData;
}

/** The profile's percentiles every three hours: the chart's numbers as a table. */
function ProfileTable({ p }: { p: Profile }) {
  const rows = Array.from({ length: 8 }, (_, i) => (i * 180) / BIN_MINUTES);
  const cell = (v: number | null | undefined) => (v === null || v === undefined ? "-" : Math.round(v));
  return (
    <table class="agp-table">
      <caption>Glucose by time of day (mg/dL), percentiles over {PERIOD_MS / 86_400_000} days</caption>
      <thead><tr><th scope="col">Time</th><th scope="col">5th</th><th scope="col">25th</th><th scope="col">Median</th><th scope="col">75th</th><th scope="col">95th</th></tr></thead>
      <tbody>
        {rows.map((b) => (
          <tr key={b}>
            <th scope="row">{clockLabel(b * BIN_MINUTES)}</th>
            <td>{cell(p.p5[b])}</td><td>{cell(p.p25[b])}</td><td>{cell(p.p50[b])}</td><td>{cell(p.p75[b])}</td><td>{cell(p.p95[b])}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** CGM glucose as an ambulatory glucose profile over 14 days, with its time in ranges. */
export function GlucoseProfile({ pid, timeZone, asOf }: ChartProps) {
  const loaded = useLoad(() => loadReadings(pid, asOf), [pid, asOf]);
  const profile = useMemo(() => (loaded.value ? glucoseProfile(loaded.value.readings, timeZone) : null), [loaded.value, timeZone]);
  const options = useMemo(() => (profile ? agpOptions(profile.days.length) : null), [profile]);
  const data = useMemo(() => (profile ? agpData(profile) : null), [profile]);
  if (loaded.error) return <p role="alert" class="error">{loaded.error.message}</p>;
  if (loaded.value === undefined) return <p>Loading glucose...</p>;
  if (!profile || !options || !data) return <p>No CGM readings.</p>;
  const first = profile.days[0];
  const last = profile.days[profile.days.length - 1];
  return (
    <section aria-label="Glucose profile" class="chart-block">
      <h3>Ambulatory glucose profile</h3>
      <p class="chart-summary">
        {profile.readings} readings over the {PERIOD_MS / 86_400_000} days to the latest (local dates {first} to {last}, {timeZone}); mean <span data-key="mean">{profile.mean_mg_dl}</span> mg/dL,
        GMI {profile.gmi_percent} %{profile.cv_percent !== null && <>, coefficient of variation {profile.cv_percent} %</>}. The thick line is the median,
        the dark band the 25th to 75th percentiles, the light band the 5th to 95th; grey lines are the days; the dashed green lines bound the target range, 70-180 mg/dL.
      </p>
      <div class="agp">
        <UPlotChart options={options} data={data} label={`Glucose by time of day over ${PERIOD_MS / 86_400_000} days: median and percentile bands`} />
        <TimeInRangeBar tir={profile.tir} />
      </div>
      <ProfileTable p={profile} />
    </section>
  );
}
