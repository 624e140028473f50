import { useEventModule, type ChartProps } from "./use-event-module.js";
import { clock, TimeChart, type Series } from "./time-series.js";

/** The part of the vitals module's payload (readmodels/modules/vitals) the charts read. */
interface VitalsPayload {
  latest: Record<string, { value: number; timestamp: string }>;
  /** The last 100 measurement events, ascending by measurement time. */
  history: { timestamp: string; measurements: Record<string, number> }[];
}

const BP_HR: Series[] = [
  { key: "systolic_bp_mmhg", label: "Systolic", unit: "mmHg", stroke: "#a4000f" },
  { key: "diastolic_bp_mmhg", label: "Diastolic", unit: "mmHg", stroke: "#e07b00" },
  { key: "heart_rate_bpm", label: "Heart rate", unit: "bpm", stroke: "#1d6fa5" },
];
const WEIGHT: Series[] = [{ key: "weight_kg", label: "Weight", unit: "kg", stroke: "#2e8b57" }];

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
export function Vitals({ pid, timeZone, asOf }: ChartProps) {
  const m = useEventModule(pid, "vitals", asOf);
  if (m.error) return <p role="alert" class="error">{m.error.message}</p>;
  if (m.value === undefined) return <p>Loading vitals...</p>;
  const v = m.value.payload as Partial<VitalsPayload>;
  const history = v.history ?? [];
  if (history.length === 0) return <p>No vitals measured.</p>;
  const rows = history.map((h) => ({ timestamp: h.timestamp, values: h.measurements }));
  return (
    <>
      <Latest latest={v.latest ?? {}} timeZone={timeZone} />
      <TimeChart title="Blood pressure and heart rate" rows={rows} series={BP_HR} axis="mmHg, bpm" timeZone={timeZone} />
      <TimeChart title="Weight" rows={rows} series={WEIGHT} axis="kg" timeZone={timeZone} />
    </>
  );
}
