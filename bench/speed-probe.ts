/**
 * How fast this machine is right now, as one number: the milliseconds a fixed piece of the
 * service's own single-threaded work takes (folding 6,000 logs of the benches' mix into
 * 200 patients, and a JSON round trip of each state, as a save and a load do, five times
 * over), best of three. This VM's speed moves by up to half from hour to hour on the same build, so the
 * benches print it beside their figures: two figures compare only at similar probe times.
 *
 *   npx tsx bench/speed-probe.ts
 */
import { emptyPatientState, evolvePatient, type PatientState } from "../readmodels/patient-state.js";
import { mixLogRecords } from "./log-mix.js";

const patients = mixLogRecords(200, 30);

function once(): number {
  const t0 = performance.now();
  let bytes = 0;
  for (let round = 0; round < 5; round++) for (const logs of patients) {
    let s: PatientState = emptyPatientState("p", "Europe/Paris");
    for (const l of logs) s = evolvePatient(s, l).state;
    const text = JSON.stringify(s);
    bytes += (JSON.parse(text) as PatientState).applied + text.length;
  }
  if (bytes === 0) throw new Error("nothing folded");
  return performance.now() - t0;
}

/** Best of three runs, in ms (lower is faster), after one warm-up run. */
export function speedProbeMs(): number {
  once();
  return Math.round(Math.min(once(), once(), once()));
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify({ speed_probe_ms: speedProbeMs() }));
