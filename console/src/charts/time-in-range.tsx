import { THRESHOLDS, type TimeInRange } from "./glucose-stats.js";

/** The consensus's five ranges, top to bottom as the AGP report stacks them, with its colours. */
const RANGES: { key: keyof TimeInRange; label: string; color: string }[] = [
  { key: "very_high", label: `Very high (>${THRESHOLDS.veryHigh} mg/dL)`, color: "#e07b00" },
  { key: "high", label: `High (${THRESHOLDS.high + 1}-${THRESHOLDS.veryHigh} mg/dL)`, color: "#f4c542" },
  { key: "in_range", label: `In range (${THRESHOLDS.low}-${THRESHOLDS.high} mg/dL)`, color: "#2e8b57" },
  { key: "low", label: `Low (${THRESHOLDS.veryLow}-${THRESHOLDS.low - 1} mg/dL)`, color: "#e5383b" },
  { key: "very_low", label: `Very low (<${THRESHOLDS.veryLow} mg/dL)`, color: "#8b0000" },
];

/**
 * The time-in-range bar: one stacked column drawn in SVG (attributes, no inline style, so
 * the CSP holds), and beside it the same percentages as a list, read by screen readers
 * and tests.
 */
export function TimeInRangeBar({ tir }: { tir: TimeInRange }) {
  let y = 0;
  const H = 200;
  return (
    <figure class="tir">
      <svg width="48" height={H} viewBox={`0 0 48 ${H}`} aria-hidden="true">
        {RANGES.map((r) => {
          const h = (tir[r.key] / 100) * H;
          const rect = <rect key={r.key} x="0" y={y} width="48" height={h} fill={r.color} />;
          y += h;
          return rect;
        })}
      </svg>
      <figcaption>
        <strong>Time in ranges</strong> (targets: over 70 % in range, under 4 % below 70, under 1 % below 54, under 25 % above 180, under 5 % above 250)
        <ul aria-label="Time in ranges">
          {RANGES.map((r) => (
            <li key={r.key} data-range={r.key}>
              <svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={r.color} /></svg> {r.label}: <span class="pct">{tir[r.key].toFixed(1)} %</span>
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
