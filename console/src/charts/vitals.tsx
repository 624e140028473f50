import { useMemo } from "preact/hooks";
import uPlot from "uplot";
import { api } from "../lib/api.js";
import { useLoad } from "../lib/use-load.js";
import type { EventModule } from "../../../client/types.js";
import { UPlotChart } from "./uplot-chart.js";

/** The part of the vitals module's payload (readmodels/modules/vitals) the charts read. */
interface VitalsPayload {
  latest: Record<string, { value: number; timestamp: string }>;
  /** The last 100 measurement events, ascending by measurement time. */
  history: { timestamp: string; measurements: Record<string, number> }[];
}

interface Series {
  key: string;
  label: string;
  unit: string;
  stroke: string;
}

const BP_HR: Series[] = [
  { key: "systolic_bp_mmhg", label: "Systolic", unit: "mmHg", stroke: "#a4000f" },
  { key: "diastolic_bp_mmhg", label: "Diastolic", unit: "mmHg", stroke: "#e07b00" },
  { key: "heart_rate_bpm", label: "Heart rate", unit: "bpm", stroke: "#1d6fa5" },
];
const WEIGHT: Series[] = [{ key: "weight_kg", label: "Weight", unit: "kg", stroke: "#2e8b57" }];

/** "YYYY-MM-DD HH:MM" of an instant in the patient's time zone. */
function clock(timeZone: string): (ms: number) => string {
  const f = new Intl.DateTimeFormat("sv-SE", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
  return (ms) => f.format(ms);
}

/** The history's entries measuring any of `series`, as uPlot's aligned columns (seconds, then each series, null where not measured). */
function columns(history: VitalsPayload["history"], series: Series[]): uPlot.AlignedData | null {
  const rows = history.filter((h) => series.some((s) => typeof h.measurements[s.key] === "number")).sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
  if (rows.length === 0) return null;
  return [rows.map((h) => Date.parse(h.timestamp) / 1000), ...series.map((s) => rows.map((h) => h.measurements[s.key] ?? null))] as uPlot.AlignedData;
}

function options(series: Series[], unit: string, timeZone: string): Omit<uPlot.Options, "width" | "height"> {
  return {
    // The time axis in the patient's zone, as the table and the glucose profile are.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone),
    scales: { x: { time: true } },
    axes: [{}, { label: unit }],
    series: [{ label: "Measured" }, ...series.map((s) => ({ label: `${s.label} (${s.unit})`, stroke: s.stroke, width: 2, spanGaps: true, points: { show: true, size: 5 } }))],
  };
}

/** One chart of vitals over time, with the measurements behind it as a table. */
function VitalsChart({ title, history, series, unit, timeZone }: { title: string; history: VitalsPayload["history"]; series: Series[]; unit: string; timeZone: string }) {
  const data = useMemo(() => columns(history, series), [history, series]);
  const opts = useMemo(() => options(series, unit, timeZone), [series, unit, timeZone]);
  const at = useMemo(() => clock(timeZone), [timeZone]);
  if (!data) return null;
  const times = data[0];
  const recent = Array.from({ length: Math.min(10, times.length) }, (_, i) => times.length - 1 - i);
  return (
    <section aria-label={title} class="chart-block">
      <h3>{title}</h3>
      <UPlotChart options={opts} data={data} height={220} label={`${title} over time, ${times.length} measurements`} />
      <table class="readings">
        <caption>{title}: the latest {recent.length} of {times.length} measurements</caption>
        <thead><tr><th scope="col">Measured ({timeZone})</th>{series.map((s) => <th key={s.key} scope="col">{s.label} ({s.unit})</th>)}</tr></thead>
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

/** The latest blood pressure, heart rate and weight, in words. */
function Latest({ latest, timeZone }: { latest: VitalsPayload["latest"]; timeZone: string }) {
  const at = clock(timeZone);
  const day = (iso: string) => at(Date.parse(iso));
  const sys = latest.systolic_bp_mmhg;
  const dia = latest.diastolic_bp_mmhg;
  const hr = latest.heart_rate_bpm;
  const kg = latest.weight_kg;
  if (!sys && !hr && !kg) return null;
  return (
    <dl class="latest-vitals" aria-label="Latest vitals">
      {sys && dia && <><dt>Latest blood pressure</dt><dd data-key="bp">{sys.value}/{dia.value} mmHg <small>({day(sys.timestamp)})</small></dd></>}
      {hr && <><dt>Latest heart rate</dt><dd data-key="hr">{hr.value} bpm <small>({day(hr.timestamp)})</small></dd></>}
      {kg && <><dt>Latest weight</dt><dd data-key="weight">{kg.value} kg <small>({day(kg.timestamp)})</small></dd></>}
    </dl>
  );
}

/** Blood pressure and heart rate, and weight, over time, from the vitals module. */
export function Vitals({ pid, timeZone }: { pid: string; timeZone: string }) {
  const m = useLoad(() => api<EventModule>("GET", `/v1/state/${pid}/event-modules/vitals`), [pid]);
  if (m.error) return <p role="alert" class="error">{m.error.message}</p>;
  if (m.value === undefined) return <p>Loading vitals...</p>;
  const v = m.value.payload as Partial<VitalsPayload>;
  const history = v.history ?? [];
  if (history.length === 0) return <p>No vitals measured.</p>;
  return (
    <>
      <Latest latest={v.latest ?? {}} timeZone={timeZone} />
      <VitalsChart title="Blood pressure and heart rate" history={history} series={BP_HR} unit="mmHg, bpm" timeZone={timeZone} />
      <VitalsChart title="Weight" history={history} series={WEIGHT} unit="kg" timeZone={timeZone} />
    </>
  );
}
