import { useEventModule, type ChartProps } from "./use-event-module.js";
import { TimeChart, type Series, type TimeRow } from "./time-series.js";

/** The part of the symptoms module's payload (readmodels/modules/symptoms) the chart reads. */
interface SymptomsPayload {
  symptoms: {
    name: string;
    status: "active" | "resolved";
    current_score: number;
    instrument: string;
    scale_min: number | null;
    scale_max: number | null;
    /** The last reports, ascending by time. */
    history: { timestamp: string; score: number }[];
  }[];
}

/** Distinct, high-contrast line colours, reused in turn past the eighth symptom. */
const COLORS = ["#a4000f", "#1d6fa5", "#2e8b57", "#e07b00", "#6a3d9a", "#0b3d62", "#b15928", "#555555"];

/** Each symptom's reported scores over time, one line per symptom, from the symptoms module. */
export function Symptoms({ pid, timeZone, asOf }: ChartProps) {
  const m = useEventModule(pid, "symptoms", asOf);
  if (m.error) return <p role="alert" class="error">{m.error.message}</p>;
  if (m.value === undefined) return <p>Loading symptoms...</p>;
  const symptoms = ((m.value.payload as Partial<SymptomsPayload>).symptoms ?? []).filter((s) => s.history.length > 0);
  if (symptoms.length === 0) return <p>No symptom scores.</p>;
  const series: Series[] = symptoms.map((s, i) => ({ key: String(i), label: s.name, stroke: COLORS[i % COLORS.length]! }));
  // One row per report time; the symptoms reported then, by their series key.
  const byTime = new Map<string, TimeRow>();
  symptoms.forEach((s, i) => {
    for (const h of s.history) {
      const row = byTime.get(h.timestamp) ?? { timestamp: h.timestamp, values: {} };
      row.values[String(i)] = h.score;
      byTime.set(h.timestamp, row);
    }
  });
  return (
    <>
      <TimeChart title="Symptom scores" rows={[...byTime.values()]} series={series} axis="score" timeZone={timeZone} />
      <ul class="symptom-scales" aria-label="Symptoms now">
        {symptoms.map((s) => (
          <li key={s.name}>
            {s.name}: {s.current_score}
            {s.scale_max !== null && ` of ${s.scale_max}`} ({s.instrument}, {s.status}, {s.history.length} reports)
          </li>
        ))}
      </ul>
    </>
  );
}
