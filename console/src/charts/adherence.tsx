import { api } from "../lib/api.js";
import { useLoad } from "../lib/use-load.js";
import type { EventModule } from "../../../client/types.js";
import type { ChartProps } from "./use-event-module.js";
import { buildCalendar, countsText, dayLabel, earlierReads, readEnd, type DoseCell, type DoseStatus, type ScheduleRead } from "./adherence-days.js";

/** Each status with a symbol and a word as well as its colour, so none rests on colour alone. */
const STATUS: Record<DoseStatus, { symbol: string; word: string }> = {
  taken: { symbol: "✓", word: "taken" },
  skipped: { symbol: "✗", word: "skipped" },
  unreported: { symbol: "?", word: "not reported" },
};

/** The adherence module's scheduled doses as of `asOf` (now when unset). */
async function scheduleAt(pid: string, asOf: string | undefined): Promise<ScheduleRead[]> {
  const m = await api<EventModule>("GET", `/v1/state/${pid}/event-modules/adherence`, { query: { as_of: asOf } });
  return (m.payload as { schedule?: ScheduleRead[] }).schedule ?? [];
}

/**
 * The module holds one week of scheduled doses; four weeks take a read as of the end of
 * each earlier week as well, side by side, the latest read first.
 */
async function loadReads(pid: string, asOf: string | undefined): Promise<ScheduleRead[][]> {
  const latest = await scheduleAt(pid, asOf);
  const end = readEnd(latest);
  if (end === undefined) return [latest];
  return [latest, ...(await Promise.all(earlierReads(end).map((at) => scheduleAt(pid, at))))];
}

function Dose({ d }: { d: DoseCell }) {
  const s = STATUS[d.status];
  return <li class={`dose dose-${d.status}`}><span aria-hidden="true">{s.symbol}</span> {d.time} {s.word}</li>;
}

/**
 * Scheduled doses by day and medication over four weeks, each taken, skipped or not
 * reported, from the adherence module (GET /v1/state/{pid}/event-modules/adherence).
 */
export function AdherenceCalendar({ pid, timeZone, asOf }: ChartProps) {
  const m = useLoad(() => loadReads(pid, asOf), [pid, asOf]);
  if (m.error) return <p role="alert" class="error">{m.error.message}</p>;
  if (m.value === undefined) return <p>Loading dose adherence...</p>;
  const cal = buildCalendar(m.value, timeZone);
  if (cal.days.length === 0 || cal.medications.length === 0) return <p>No scheduled doses.</p>;
  return (
    <section aria-labelledby="adherence-title" class="chart-block adherence">
      <h3 id="adherence-title">Dose adherence</h3>
      <p class="adherence-counts" data-key="adherence-counts">
        {cal.days[0]} to {cal.days[cal.days.length - 1]}: {countsText(cal.counts)}
        {cal.medications.length > 1 && ` (${cal.medications.map((med) => `${med.name}: ${countsText(med.counts)}`).join("; ")})`}.
      </p>
      <ul class="adherence-legend" aria-label="Legend">
        {(Object.keys(STATUS) as DoseStatus[]).map((k) => <li key={k} class={`dose dose-${k}`}><span aria-hidden="true">{STATUS[k].symbol}</span> {STATUS[k].word}</li>)}
        <li class="dose">– no dose scheduled or tracked</li>
      </ul>
      <table class="adherence-calendar">
        <caption>Scheduled doses by day ({timeZone}) and medication</caption>
        <thead>
          <tr><th scope="col">Day</th>{cal.medications.map((med) => <th key={med.name} scope="col">{med.name}</th>)}</tr>
        </thead>
        <tbody>
          {cal.days.map((day) => (
            <tr key={day}>
              <th scope="row">{dayLabel(day)}</th>
              {cal.medications.map((med) => {
                const doses = med.days.get(day);
                return <td key={med.name}>{doses ? <ul>{doses.map((d) => <Dose key={d.time} d={d} />)}</ul> : "–"}</td>;
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
