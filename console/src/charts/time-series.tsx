import { useMemo } from "preact/hooks";
import uPlot from "uplot";
import { UPlotChart } from "./uplot-chart.js";

/** One line of a time chart: the values named `key` in each row. */
export interface Series {
  key: string;
  label: string;
  /** Shown beside the label, in the legend and the table's heading. */
  unit?: string;
  stroke: string;
  /** Drawn dashed and thin: a bound (a reference range's edge), not a measurement. */
  dashed?: boolean;
}

/** One moment of a time chart: when, and the values measured then by series key. */
export interface TimeRow {
  timestamp: string;
  values: Record<string, number>;
}

/** "YYYY-MM-DD HH:MM" of an instant in a time zone. */
export function clock(timeZone: string): (ms: number) => string {
  const f = new Intl.DateTimeFormat("sv-SE", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  return (ms) => f.format(ms);
}

const named = (s: Series) => (s.unit ? `${s.label} (${s.unit})` : s.label);

/** The rows measuring any of `series`, as uPlot's aligned columns (seconds, then each series, null where not measured). */
function columns(rows: readonly TimeRow[], series: readonly Series[]): uPlot.AlignedData | null {
  const kept = rows.filter((r) => series.some((s) => typeof r.values[s.key] === "number")).sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
  if (kept.length === 0) return null;
  return [kept.map((r) => Date.parse(r.timestamp) / 1000), ...series.map((s) => kept.map((r) => r.values[s.key] ?? null))] as uPlot.AlignedData;
}

function options(series: readonly Series[], axis: string, timeZone: string, band?: [string, string]): Omit<uPlot.Options, "width" | "height"> {
  const at = (key: string) => series.findIndex((s) => s.key === key) + 1;
  return {
    ...(band ? { bands: [{ series: [at(band[0]), at(band[1])] as [number, number], fill: "rgba(46,139,87,0.12)" }] } : {}),
    // The time axis in the patient's zone, as the table and the glucose profile are.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone),
    scales: { x: { time: true } },
    axes: [{}, { label: axis }],
    series: [{ label: "Measured" }, ...series.map((s) =>
      s.dashed ? { label: named(s), stroke: s.stroke, width: 1, dash: [4, 4], spanGaps: true, points: { show: false } } : { label: named(s), stroke: s.stroke, width: 2, spanGaps: true, points: { show: true, size: 5 } },
    )],
  };
}

/**
 * Values over time in the patient's time zone, with the latest ten rows behind the chart
 * as a table (class "readings"): the chart's text alternative. `band`: the keys of two
 * series (upper, lower) whose area between is shaded, such as a reference range.
 */
export function TimeChart({ title, rows, series, axis, timeZone, band }: { title: string; rows: readonly TimeRow[]; series: readonly Series[]; axis: string; timeZone: string; band?: [string, string] }) {
  const data = useMemo(() => columns(rows, series), [rows, series]);
  const opts = useMemo(() => options(series, axis, timeZone, band), [series, axis, timeZone, band?.[0], band?.[1]]);
  const at = useMemo(() => clock(timeZone), [timeZone]);
  if (!data) return null;
  const times = data[0];
  const recent = Array.from({ length: Math.min(10, times.length) }, (_, i) => times.length - 1 - i);
  return (
    <section aria-label={title} class="chart-block">
      <h3>{title}</h3>
      <UPlotChart options={opts} data={data} height={220} label={`${title} over time, ${times.length} measurements`} />
      <table class="readings">
        <caption>{title}: the latest {recent.length} of {times.length}</caption>
        <thead><tr><th scope="col">When ({timeZone})</th>{series.map((s) => <th key={s.key} scope="col">{named(s)}</th>)}</tr></thead>
        <tbody>
          {recent.map((i) => (
            <tr key={i}>
              <td>{at(times[i]! * 1000)}</td>
              {series.map((s, k) => <td key={s.key}>{data[k + 1]![i] ?? "-"}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
