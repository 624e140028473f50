/**
 * The pure fold alone, no I/O: P patients (default 3,000) each get N logs (default 20) of
 * the benches' mix, applied 10 at a time as the engine applies a message; prints CPU per
 * log for the fold and for serializing the modules that changed, and (without NOVIEWS=1)
 * the time to render all eight views of one patient. Two passes; the second is reported.
 *
 *   npx tsx bench/fold.ts [N]        (P=3000 NOVIEWS=1 npx tsx bench/fold.ts 20)
 */
import { emptyPatientState, evolvePatient, type PatientState } from "../readmodels/patient-state.js";
import { renderView, VIEW_TYPES } from "../readmodels/views/index.js";
import { mixLogRecords } from "./log-mix.js";

const perPatient = Number(process.argv[2] ?? 20);
const patients = Number(process.env.P ?? 3000);
const all = mixLogRecords(patients, perPatient);
const cpuMs = () => process.cpuUsage().user / 1000;
const changedJson = (before: PatientState, after: PatientState): number => {
  let bytes = 0;
  for (const table of ["stable", "event"] as const) {
    const a = after[table] as Record<string, unknown>;
    const b = before[table] as Record<string, unknown>;
    for (const k of Object.keys(a)) if (a[k] !== b[k]) bytes += JSON.stringify(a[k]).length;
  }
  return bytes;
};

let result = {};
for (let pass = 0; pass < 2; pass++) {
  let fold = 0;
  let ser = 0;
  let views = 0;
  let bytes = 0;
  for (const logs of all) {
    let s = emptyPatientState("p");
    for (let i = 0; i < logs.length; i += 10) {
      const t0 = cpuMs();
      const before = s;
      for (const l of logs.slice(i, i + 10)) s = evolvePatient(s, l).state;
      const t1 = cpuMs();
      bytes += changedJson(before, s);
      fold += t1 - t0;
      ser += cpuMs() - t1;
    }
    if (!process.env.NOVIEWS) {
      const t = cpuMs();
      for (const v of VIEW_TYPES) renderView(v, s);
      views += cpuMs() - t;
    }
  }
  const logs = perPatient * patients;
  result = {
    patients,
    logs_per_patient: perPatient,
    fold_us_per_log: +((fold * 1000) / logs).toFixed(1),
    serialize_changed_modules_us_per_log: +((ser * 1000) / logs).toFixed(1),
    serialized_bytes_per_log: Math.round(bytes / logs),
    ...(process.env.NOVIEWS ? {} : { all_eight_views_ms_per_patient: +(views / patients).toFixed(2) }),
  };
}
console.log(JSON.stringify(result, null, 2));
