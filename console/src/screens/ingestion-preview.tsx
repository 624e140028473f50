import { api } from "../lib/api.js";
import { beforeAfter, words } from "../lib/field-change.js";
import { useLoad } from "../lib/use-load.js";
import type { IngestionJob, JobPreview } from "../../../client/types.js";

type PatientPreview = JobPreview["patients"][number];
/** Patients the review previews: enough to judge the file by, few enough to read (the service allows 20). */
const SAMPLE = 5;
const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function PatientChanges({ p }: { p: PatientPreview }) {
  const who = p.name ?? p.patient_id;
  const rows = p.modules.flatMap((m) => m.fields.map((f) => ({ m, f })));
  return (
    <article aria-labelledby={`preview-${p.patient_id}`} class="preview-patient">
      <h4 id={`preview-${p.patient_id}`}>
        <a href={`#/patients/${p.patient_id}`}>{who}</a> <small>{p.patient_id}</small>
      </h4>
      <p>
        {count(p.logs_staged, "log")} staged{p.logs_duplicate > 0 && `, ${p.logs_duplicate} already stored`}{p.logs_invalid > 0 && `, ${p.logs_invalid} refused`}.{" "}
        {rows.length === 0 ? "Nothing in this patient's state would change." : `${count(p.modules.length, "module")} would change.`}
      </p>
      {rows.length > 0 && (
        <table aria-label={`Changes for ${who}`}>
          <thead><tr><th scope="col">Module</th><th scope="col">Field</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
          <tbody>
            {rows.map(({ m, f }) => {
              const [before, after] = beforeAfter(f);
              return (
                <tr key={`${m.module_type}/${f.field}`}>
                  <td>{words(m.module_type)}{m.op === "created" ? " (new)" : ""}</td>
                  <td>{words(f.field)}</td>
                  <td>{before}</td>
                  <td>{after}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </article>
  );
}

/**
 * What confirming would change for the first patients of the job (GET .../preview), read
 * again when the review's counts change (a patient taken out).
 */
export function Preview({ job }: { job: IngestionJob }) {
  const { value, error, loading } = useLoad(
    () => api<JobPreview>("GET", `/v1/ingestion/jobs/${job.job_id}/preview`, { query: { limit: SAMPLE } }),
    [job.job_id, job.patients_total, job.logs_staged],
  );
  return (
    <section aria-labelledby="preview" aria-busy={loading}>
      <h3 id="preview">What confirming will change</h3>
      {error && <p role="alert" class="error">{error.message}</p>}
      {value && (
        <>
          <p>
            {value.patients.length < value.patients_total ? `The first ${value.patients.length} of ${value.patients_total} patients` : `All ${value.patients_total} patients`}, their state now and after the confirm:
          </p>
          {value.patients.map((p) => <PatientChanges key={p.patient_id} p={p} />)}
        </>
      )}
      {!value && !error && <p>Reading the staged logs...</p>}
    </section>
  );
}
