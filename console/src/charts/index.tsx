import { AdherenceCalendar } from "./adherence.js";
import { GlucoseProfile } from "./glucose-profile.js";
import { Labs } from "./labs.js";
import { Symptoms } from "./symptoms.js";
import type { ChartProps } from "./use-event-module.js";
import { Vitals } from "./vitals.js";

/** The patient page's charts as of `asOf` (none: now): each loads its own data, so one slow or failing source leaves the others. */
export function Charts({ pid, timeZone, asOf }: ChartProps) {
  return (
    <section aria-label="Charts" class="charts">
      <h2>Charts</h2>
      <GlucoseProfile pid={pid} timeZone={timeZone} asOf={asOf} />
      <Vitals pid={pid} timeZone={timeZone} asOf={asOf} />
      <Symptoms pid={pid} timeZone={timeZone} asOf={asOf} />
      <Labs pid={pid} timeZone={timeZone} asOf={asOf} />
      <AdherenceCalendar pid={pid} timeZone={timeZone} asOf={asOf} />
    </section>
  );
}
