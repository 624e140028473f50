import { useState } from "preact/hooks";
import { endOfDay, startOfDay, wallClock, zonedToUtc } from "../lib/zoned-time.js";

/** The patient page's time: the state shown as of an instant (none: now), and the visit changes are read since. */
export interface PatientTime {
  asOf?: string;
  since?: string;
}

const value = (e: Event) => (e.target as HTMLInputElement).value;

/**
 * Picks the time the patient page shows (`as_of` of the state reads) and a visit to list
 * the changes since (`/changes`), both as wall-clock times in the patient's zone.
 */
export function TimeControl({ timeZone, time, onChange }: { timeZone: string; time: PatientTime; onChange: (t: PatientTime) => void }) {
  const [day, setDay] = useState("");
  const [clock, setClock] = useState("");
  const [visit, setVisit] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const asOf = () => (clock ? zonedToUtc(`${day}T${clock}`, timeZone) : endOfDay(day, timeZone));
  return (
    <section aria-labelledby="time-heading" class="time-control">
      <h2 id="time-heading">Time</h2>
      <form
        class="row"
        aria-label="Show the patient as of a time"
        onSubmit={(e) => {
          e.preventDefault();
          const at = day ? asOf() : undefined;
          setProblem(at ? null : "Pick the day to show the patient as of.");
          if (at) onChange({ ...time, asOf: at });
        }}
      >
        <label class="field">As of day<input type="date" value={day} onInput={(e) => setDay(value(e))} /></label>
        <label class="field">Time (optional, end of day if blank)<input type="time" value={clock} onInput={(e) => setClock(value(e))} /></label>
        <button type="submit">Show as of</button>
        <button type="button" disabled={time.asOf === undefined} onClick={() => onChange({ ...time, asOf: undefined })}>Back to now</button>
      </form>
      <form
        class="row"
        aria-label="What changed since a visit"
        onSubmit={(e) => {
          e.preventDefault();
          const since = visit ? startOfDay(visit, timeZone) : undefined;
          setProblem(since ? null : "Pick the visit's day to list what changed since.");
          if (since) onChange({ ...time, since });
        }}
      >
        <label class="field">Visit day<input type="date" value={visit} onInput={(e) => setVisit(value(e))} /></label>
        <button type="submit">Show changes since the visit</button>
        <button type="button" disabled={time.since === undefined} onClick={() => onChange({ ...time, since: undefined })}>Hide changes</button>
      </form>
      {problem && <p role="alert" class="error">{problem}</p>}
      <p role="status" class={time.asOf ? "notice" : undefined}>
        {time.asOf
          ? `Showing the patient as of ${wallClock(time.asOf, timeZone)} (${timeZone}): views, charts and the timeline leave out logs with a later event time.`
          : "Showing the patient now."}
      </p>
    </section>
  );
}
