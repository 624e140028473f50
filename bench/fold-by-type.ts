/**
 * The pure fold per log type: 2,000 patients each get 24 logs of the benches' mix, one at
 * a time; prints the mean time of one evolvePatient call per type (third pass reported).
 * Finds the reducer that costs more than its share (see readmodels/README.md, "Writing
 * reducers that stay fast").
 *
 *   npx tsx bench/fold-by-type.ts
 */
import { emptyPatientState, evolvePatient, type PatientState } from "../readmodels/patient-state.js";
import { mixLogRecords } from "./log-mix.js";

const PATIENTS = 2_000;
const PER_PATIENT = 24;
const logs = mixLogRecords(PATIENTS, PER_PATIENT);

const perType = new Map<string, { ms: number; n: number }>();
for (let pass = 0; pass < 3; pass++) {
  perType.clear();
  for (let p = 0; p < PATIENTS; p++) {
    let s: PatientState = emptyPatientState(`p${p}`);
    for (const l of logs[p]!) {
      const t0 = performance.now();
      s = evolvePatient(s, l).state;
      const t = perType.get(l.log_type) ?? { ms: 0, n: 0 };
      t.ms += performance.now() - t0;
      t.n++;
      perType.set(l.log_type, t);
    }
  }
}
let ms = 0;
let count = 0;
for (const [type, t] of [...perType].sort((a, b) => b[1].ms / b[1].n - a[1].ms / a[1].n)) {
  ms += t.ms;
  count += t.n;
  console.log(type.padEnd(30), `${((t.ms * 1000) / t.n).toFixed(1)} us`);
}
console.log("mean".padEnd(30), `${((ms * 1000) / count).toFixed(1)} us`);
