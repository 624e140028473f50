import { AdherenceCalendar } from "./adherence.js";
import { GlucoseProfile } from "./glucose-profile.js";
import { Labs } from "./labs.js";
import { Symptoms } from "./symptoms.js";
import { Vitals } from "./vitals.js";

/** The patient page's charts: each loads its own data, so one slow or failing source leaves the others. */
export function Charts({ pid, timeZone }: { pid: string; timeZone: string }) {
  return (
    <section aria-label="Charts" class="charts">
      <h2>Charts</h2>
      <GlucoseProfile pid={pid} timeZone={timeZone} />
      <Vitals pid={pid} timeZone={timeZone} />
      <Symptoms pid={pid} timeZone={timeZone} />
      <Labs pid={pid} timeZone={timeZone} />
      <AdherenceCalendar pid={pid} timeZone={timeZone} />
    </section>
  );
}
