import { useState } from "preact/hooks";
import { api, upload } from "../lib/api.js";
import { useLoad } from "../lib/use-load.js";
import type { IngestionJob, JobList, UploadUrl } from "../../../client/types.js";

const PAGE = 20;

/** Where a new job's file stands: picked, uploading (bytes sent of total), creating the job. */
type Sending = { step: "uploading"; sent: number; total: number } | { step: "creating" } | null;

/**
 * A new job from a JSONL (or FHIR NDJSON) file: a one-time upload URL, the file PUT to it
 * with its progress shown, then the job created from the stored file. The job page follows it.
 */
function NewJob() {
  const [file, setFile] = useState<File | null>(null);
  const [rollback, setRollback] = useState(false);
  const [sending, setSending] = useState<Sending>(null);
  const [error, setError] = useState<string | null>(null);
  const start = async () => {
    if (!file) return;
    setError(null);
    try {
      const u = await api<UploadUrl>("POST", "/v1/ingestion/upload-url");
      setSending({ step: "uploading", sent: 0, total: file.size });
      await upload(u.upload_url, file, (sent, total) => setSending({ step: "uploading", sent, total }));
      setSending({ step: "creating" });
      const job = await api<IngestionJob>("POST", "/v1/ingestion/jobs", { body: { s3_key: u.s3_key, rollback_on_cancel: rollback } });
      location.hash = `#/ingestion/${job.job_id}`;
    } catch (e) {
      setError((e as Error).message);
      setSending(null);
    }
  };
  return (
    <section aria-labelledby="new-job">
      <h2 id="new-job">New job</h2>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          void start();
        }}
      >
        <label for="job-file">JSONL file (patient and log rows, or FHIR NDJSON)</label>
        <input id="job-file" type="file" accept=".jsonl,.ndjson,.json,application/x-ndjson,application/json" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
        <label>
          <input type="checkbox" checked={rollback} onChange={(e) => setRollback((e.target as HTMLInputElement).checked)} /> If the job is cancelled, also remove the patients it created (rollback)
        </label>
        <button type="submit" disabled={!file || sending !== null}>Upload and start</button>
      </form>
      {sending?.step === "uploading" && (
        <p>
          <label for="upload-progress">Upload</label>{" "}
          <progress id="upload-progress" max={sending.total || 1} value={sending.sent} /> {sending.sent} of {sending.total} bytes
        </p>
      )}
      {sending?.step === "creating" && <p aria-live="polite">Uploaded; creating the job...</p>}
      {error && <p role="alert" class="error">{error}</p>}
    </section>
  );
}

/** The project's jobs, newest first, a page at a time. */
function Jobs() {
  const [page, setPage] = useState(1);
  const list = useLoad(() => api<JobList>("GET", "/v1/ingestion/jobs", { query: { page, pageSize: PAGE } }), [page]);
  return (
    <section aria-labelledby="jobs">
      <h2 id="jobs">Jobs</h2>
      <button type="button" onClick={list.reload}>Refresh</button>
      {list.error && <p role="alert" class="error">{list.error.message}</p>}
      {list.value && (
        <>
          <table>
            <thead>
              <tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Patients</th><th scope="col">Logs</th><th scope="col">Errors</th></tr>
            </thead>
            <tbody>
              {list.value.jobs.map((j) => (
                <tr key={j.job_id}>
                  <td><a href={`#/ingestion/${j.job_id}`}>{j.job_id}</a></td>
                  <td>{j.status.replaceAll("_", " ")}</td>
                  <td>{j.created_at}</td>
                  <td>{j.patients_total}</td>
                  <td>{j.logs_total}</td>
                  <td>{j.error_summary.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav aria-label="Pages of jobs">
            <button type="button" disabled={page === 1} onClick={() => setPage(page - 1)}>Previous</button>
            <span>{list.value.total === 0 ? "No jobs yet" : `Page ${page}, ${list.value.total} jobs`}</span>
            <button type="button" disabled={!list.value.has_more} onClick={() => setPage(page + 1)}>Next</button>
          </nav>
        </>
      )}
    </section>
  );
}

/** Historical data in: upload a file as an ingestion job, and the project's jobs. */
export function Ingestion() {
  return (
    <main>
      <h1>Ingestion</h1>
      <NewJob />
      <Jobs />
    </main>
  );
}
