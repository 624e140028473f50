import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../lib/api.js";
import type { IngestionJob } from "../../../client/types.js";
import { Review } from "./ingestion-review.js";

/** How often a job at work is read again. @default 1_000 (1 s): the service saves counts about once a second. */
const POLL_MS = 1_000;

/** Statuses at which the job is still moving on its own (the rest: the review, or how it ended). */
const AT_WORK = new Set(["queued", "validating", "inserting_patients", "inserting_logs", "replaying", "backfilling"]);

const words = (s: string) => s.replaceAll("_", " ");

/** The job, read again every second while it works; `set` takes the answer of a confirm or cancel. */
function useJob(id: string): { job: IngestionJob | null; error: string | null; set: (j: IngestionJob) => void } {
  const [job, setJob] = useState<IngestionJob | null>(null);
  const [error, setError] = useState<string | null>(null);
  // A confirm or cancel answers the job: following starts again from it.
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = () =>
      api<IngestionJob>("GET", `/v1/ingestion/jobs/${id}`).then(
        (j) => {
          if (!live) return;
          setJob(j);
          setError(null);
          if (AT_WORK.has(j.status)) timer = setTimeout(read, POLL_MS);
        },
        (e: Error) => {
          if (!live) return;
          setError(e.message);
          // A dropped connection or a restarting service: keep following; a refusal (4xx) stops.
          if (!(e instanceof ApiError) || e.status === 0 || e.status >= 500) timer = setTimeout(read, 5 * POLL_MS);
        },
      );
    void read();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, tick]);
  return {
    job,
    error,
    set: (j) => {
      setJob(j);
      setTick((t) => t + 1);
    },
  };
}

/** Line errors, in line order. */
function Errors({ job }: { job: IngestionJob }) {
  if (job.error_summary.length === 0) return null;
  return (
    <section aria-labelledby="line-errors">
      <h2 id="line-errors">Errors by line</h2>
      <table aria-label="Errors by line">
        <thead><tr><th scope="col">Line</th><th scope="col">Code</th><th scope="col">Message</th></tr></thead>
        <tbody>
          {job.error_summary.map((e, i) => <tr key={i}><td>{e.line}</td><td>{e.code}</td><td>{e.message}</td></tr>)}
        </tbody>
      </table>
      {job.error_summary_truncated && <p>Only the first 1,000 errors are listed.</p>}
    </section>
  );
}

/** One job: its stage and progress while it works, the review while it waits, and how it ended. */
export function IngestionJobScreen({ id }: { id: string }) {
  const { job, error, set } = useJob(id);
  if (error && !job) return <main><p role="alert" class="error">{error}</p></main>;
  if (!job) return <main><p>Loading job...</p></main>;
  const work = job.stage_work;
  return (
    <main>
      <p><a href="#/ingestion">All jobs</a></p>
      <h1>Job <code>{job.job_id}</code></h1>
      <dl class="facts">
        <dt>Status</dt><dd id="job-status" aria-live="polite">{words(job.status)}</dd>
        <dt>Stage</dt><dd>{words(job.stage.toLowerCase())}</dd>
        <dt>Lines</dt><dd>{job.lines_total}</dd>
        <dt>Patients</dt><dd>{job.patients_total} ({job.patients_created} created{job.patients_rolled_back ? `, ${job.patients_rolled_back} rolled back` : ""})</dd>
        <dt>Logs</dt><dd>{job.logs_total} ({job.logs_replayed} replayed, {job.logs_failed} failed)</dd>
        {job.status_message && <><dt>Message</dt><dd>{job.status_message}</dd></>}
      </dl>
      <p>
        <label for="job-progress">Progress</label> <progress id="job-progress" max={100} value={job.progress_pct} /> {Math.round(job.progress_pct)}%
        {work && ` (${work.label}: ${work.done} of ${work.total} ${work.unit})`}
      </p>
      {error && <p role="alert" class="error">{error}</p>}
      {job.status === "awaiting_confirmation" && <Review job={job} onDone={set} />}
      <Errors job={job} />
    </main>
  );
}
