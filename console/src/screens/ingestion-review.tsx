import { useState } from "preact/hooks";
import { api } from "../lib/api.js";
import { ConfirmButton } from "../lib/confirm-button.js";
import type { IngestionJob } from "../../../client/types.js";
import { Preview } from "./ingestion-preview.js";

const words = (s: string) => s.replaceAll("_", " ");

/** Counts as a table, largest first; `href` makes each key a link, `action` adds a last cell per row. */
function CountTable({ label, head, counts, href, action }: { label: string; head: string; counts: Record<string, number>; href?: (key: string) => string; action?: { head: string; cell: (key: string) => preact.ComponentChild } }) {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1]);
  return (
    <table aria-label={label}>
      <thead><tr><th scope="col">{head}</th><th scope="col">Logs</th>{action && <th scope="col">{action.head}</th>}</tr></thead>
      <tbody>
        {rows.map(([k, n]) => <tr key={k}><td>{href ? <a href={href(k)}>{k}</a> : k}</td><td>{n}</td>{action && <td>{action.cell(k)}</td>}</tr>)}
      </tbody>
    </table>
  );
}

/**
 * The review at awaiting_confirmation: what would go in and what it would change, what
 * was refused; then take patients out, confirm with the views to backfill, or cancel,
 * keeping or removing the patients the job created.
 */
export function Review({ job, onDone }: { job: IngestionJob; onDone: (j: IngestionJob) => void }) {
  const [types, setTypes] = useState<string[]>(job.summary_types);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const call = (method: "POST" | "DELETE", path: string, body?: unknown) => {
    setBusy(true);
    setError(null);
    api<IngestionJob>(method, `/v1/ingestion/jobs/${job.job_id}${path}`, body === undefined ? {} : { body }).then(
      (j) => {
        setBusy(false);
        onDone(j);
      },
      (e: Error) => {
        setError(e.message);
        setBusy(false);
      },
    );
  };
  const toggle = (t: string, on: boolean) => setTypes(on ? [...types, t] : types.filter((x) => x !== t));
  const created = job.patients_created;
  const remove = {
    head: "Take out",
    cell: (pid: string) => (
      <ConfirmButton
        label={`Remove ${pid}`}
        question={`Remove patient ${pid} from this job? Its staged logs are dropped${created > 0 ? ", and the patient deleted if this job created it" : ""}.`}
        yes="Remove"
        disabled={busy}
        onConfirm={() => call("DELETE", `/patients/${encodeURIComponent(pid)}`)}
      />
    ),
  };
  return (
    <section aria-labelledby="review">
      <h2 id="review">Review</h2>
      <p id="review-counts">
        {job.logs_staged} logs staged for {job.patients_total} patients ({created} new); {job.logs_invalid} invalid, {job.logs_duplicate} duplicates. Nothing is in patient state until you confirm.
      </p>
      <Preview job={job} />
      <h3>By log type</h3>
      <CountTable label="Logs by log type" head="Log type" counts={job.logs_by_event_type} />
      <h3>By patient</h3>
      <CountTable label="Logs by patient" head="Patient" counts={job.patient_log_counts} href={(pid) => `#/patients/${pid}`} action={remove} />
      {job.patient_details_truncated && <p>Only the first 1,000 patients of the file are listed.</p>}
      <fieldset>
        <legend>Views to backfill after the replay</legend>
        {job.summary_types.map((t) => (
          <label key={t} class="choice">
            <input type="checkbox" checked={types.includes(t)} onChange={(e) => toggle(t, (e.target as HTMLInputElement).checked)} /> {words(t)}
          </label>
        ))}
      </fieldset>
      <p class="actions">
        <button type="button" disabled={busy || types.length === 0} onClick={() => call("POST", "/confirm", { summary_types: types })}>Confirm</button>
        <ConfirmButton
          label="Cancel and keep created patients"
          question={`Cancel this job? Its staged logs are dropped; the ${created} patients it created stay.`}
          yes="Cancel the job"
          disabled={busy}
          onConfirm={() => call("POST", "/cancel", { rollback: false })}
        />
        <ConfirmButton
          label="Cancel and remove created patients (rollback)"
          question={`Cancel this job and delete the ${created} patients it created? This cannot be undone.`}
          yes="Cancel and remove"
          disabled={busy}
          onConfirm={() => call("POST", "/cancel", { rollback: true })}
        />
      </p>
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  );
}
