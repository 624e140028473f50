import { useState } from "preact/hooks";
import { useEventModule, type ChartProps } from "./use-event-module.js";
import { TimeChart, type Series, type TimeRow } from "./time-series.js";

/** The part of the lab_results module's payload (readmodels/modules/lab_results) the chart reads. */
interface LabResult {
  loinc_code: string | null;
  test_name: string | null;
  unit: string | null;
  reference_range_low: number | null;
  reference_range_high: number | null;
  latest: { value_numeric: number | null; abnormal_flag: string | null };
  /** The last 50 values, ascending by collection time. */
  history: { value_numeric: number | null; unit: string | null; timestamp: string }[];
}

const nameOf = (r: LabResult) => r.test_name ?? r.loinc_code ?? "unnamed test";

/** A test's values in its latest unit (a value in another unit is not drawn on the same axis), with its reference range's edges on each row. */
function rowsOf(r: LabResult): TimeRow[] {
  return r.history
    .filter((h) => h.value_numeric !== null && (h.unit === r.unit || h.unit === null))
    .map((h) => {
      const values: Record<string, number> = { value: h.value_numeric! };
      if (r.reference_range_low !== null) values.low = r.reference_range_low;
      if (r.reference_range_high !== null) values.high = r.reference_range_high;
      return { timestamp: h.timestamp, values };
    });
}

function seriesOf(r: LabResult): Series[] {
  const unit = r.unit ?? undefined;
  const out: Series[] = [{ key: "value", label: nameOf(r), unit, stroke: "#0b3d62" }];
  if (r.reference_range_high !== null) out.push({ key: "high", label: "Reference high", unit, stroke: "#2e8b57", dashed: true });
  if (r.reference_range_low !== null) out.push({ key: "low", label: "Reference low", unit, stroke: "#2e8b57", dashed: true });
  return out;
}

const range = (r: LabResult) =>
  r.reference_range_low !== null && r.reference_range_high !== null ? `${r.reference_range_low}-${r.reference_range_high}`
  : r.reference_range_high !== null ? `up to ${r.reference_range_high}`
  : r.reference_range_low !== null ? `from ${r.reference_range_low}`
  : "none given";

/** A lab test's numeric values over time against its reference range; the test is picked among those with a numeric value. */
export function Labs({ pid, timeZone, asOf }: ChartProps) {
  const m = useEventModule(pid, "lab_results", asOf);
  const [picked, setPicked] = useState(0);
  if (m.error) return <p role="alert" class="error">{m.error.message}</p>;
  if (m.value === undefined) return <p>Loading lab results...</p>;
  const tests = ((m.value.payload as { results?: LabResult[] }).results ?? []).filter((r) => rowsOf(r).length > 0);
  if (tests.length === 0) return <p>No numeric lab results.</p>;
  const r = tests[Math.min(picked, tests.length - 1)]!;
  const title = `Lab trend: ${nameOf(r)}`;
  return (
    <>
      <label class="lab-pick">
        Lab test{" "}
        <select value={String(picked)} onChange={(e) => setPicked(Number((e.target as HTMLSelectElement).value))}>
          {tests.map((t, i) => <option key={i} value={String(i)}>{nameOf(t)}</option>)}
        </select>
      </label>
      <p class="lab-summary">
        {nameOf(r)}: latest <span data-key="lab-latest">{r.latest.value_numeric ?? "-"}{r.unit ? ` ${r.unit}` : ""}</span>
        {r.latest.abnormal_flag && r.latest.abnormal_flag !== "N" ? ` (flag ${r.latest.abnormal_flag})` : ""}; reference range {range(r)}
        {r.unit && (r.reference_range_low !== null || r.reference_range_high !== null) ? ` ${r.unit}` : ""}.
      </p>
      <TimeChart
        key={title}
        title={title}
        rows={rowsOf(r)}
        series={seriesOf(r)}
        axis={r.unit ?? "value"}
        timeZone={timeZone}
        {...(r.reference_range_low !== null && r.reference_range_high !== null ? { band: ["high", "low"] as [string, string] } : {})}
      />
    </>
  );
}
