import { useState } from "preact/hooks";
import { Charts } from "../charts/index.js";
import { api } from "../lib/api.js";
import { safeHtml } from "../lib/markdown.js";
import { useLoad } from "../lib/use-load.js";
import { wallClock } from "../lib/zoned-time.js";
import { LogTimeline } from "./log-timeline.js";
import { ChangesSince } from "./patient-changes.js";
import { PatientForm } from "./patient-form.js";
import { TimeControl, type PatientTime } from "./patient-time.js";
import type { Patient as PatientRecord, RecentEntries, ViewList } from "../../../client/types.js";

/** One view, as the service renders its markdown, with the dated entries behind it and the log each came from. */
function ViewDocument({ pid, type, timeZone, asOf, onShowLogs }: { pid: string; type: string; timeZone: string; asOf?: string; onShowLogs: (ids: string[]) => void }) {
  const doc = useLoad(() => api<string>("GET", `/v1/state/${pid}/views/${type}`, { query: { format: "markdown", as_of: asOf }, accept: "text/markdown" }), [pid, type, asOf]);
  const sources = useLoad(() => api<RecentEntries>("GET", `/v1/state/${pid}/views/${type}/recent`, { query: { limit: 20, as_of: asOf } }), [pid, type, asOf]);
  if (doc.error) return <p role="alert" class="error">{doc.error.message}</p>;
  if (doc.value === undefined) return <p>Loading {type}...</p>;
  return (
    <>
      {/* Sanitized by DOMPurify in safeHtml. */}
      <article class="view" dangerouslySetInnerHTML={{ __html: safeHtml(doc.value) }} />
      {sources.value && sources.value.items.length > 0 && (
        <section aria-label="Sources">
          <h2>Sources</h2>
          <table>
            <thead><tr><th scope="col">When ({timeZone})</th><th scope="col">What</th><th scope="col">Log</th></tr></thead>
            <tbody>
              {/* One log can give two entries alike in all but summary (a report of two symptoms). */}
              {sources.value.items.map((e, i) => (
                <tr key={`${e.log_id}/${e.kind}/${e.timestamp}/${i}`}>
                  <td><time dateTime={e.timestamp}>{wallClock(e.timestamp, timeZone)}</time></td>
                  <td>{e.kind}: {e.summary}</td>
                  <td>
                    <button type="button" class="log-link" onClick={() => onShowLogs([e.log_id])} aria-label={`Show log ${e.log_id} in the timeline`}>
                      <code class="log-id">{e.log_id}</code>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}

/** A patient: their record, charts of their readings, and each view of their compiled state. */
export function Patient({ pid }: { pid: string }) {
  const record = useLoad(() => api<PatientRecord>("GET", `/v1/patients/${pid}`), [pid]);
  const [time, setTime] = useState<PatientTime>({});
  const views = useLoad(() => api<ViewList>("GET", `/v1/state/${pid}/views`), [pid]);
  const [shown, setShown] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  // The logs a view entry or a change names, shown alone in the timeline.
  const [focus, setFocus] = useState<string[] | null>(null);
  const p = record.value;
  const current = shown ?? views.value?.views[0]?.view_type ?? null;
  return (
    <main>
      <p><a href="#/patients">All patients</a></p>
      {record.error && <p role="alert" class="error">{record.error.message}</p>}
      {p && (
        <header class="patient-header">
          <h1>{[p.first_name, p.last_name].filter(Boolean).join(" ") || p.id}</h1>
          <dl>
            <dt>Date of birth</dt><dd>{p.date_of_birth ?? "not known"}</dd>
            <dt>Sex</dt><dd>{p.sex ?? "not known"}</dd>
            <dt>Time zone</dt><dd>{p.timezone}</dd>
            <dt>Id</dt><dd><code>{p.id}</code></dd>
          </dl>
          {editing ? (
            <PatientForm patient={p} onSaved={() => { setEditing(false); record.reload(); }} onCancel={() => setEditing(false)} />
          ) : (
            <button type="button" onClick={() => setEditing(true)}>Edit patient</button>
          )}
        </header>
      )}
      {p && <TimeControl timeZone={p.timezone} time={time} onChange={setTime} />}
      {p && time.since && <ChangesSince pid={pid} since={time.since} until={time.asOf} timeZone={p.timezone} onShowLogs={setFocus} />}
      {p && <Charts pid={pid} timeZone={p.timezone} asOf={time.asOf} />}
      {views.error && <p role="alert" class="error">{views.error.message}</p>}
      {views.value && (
        <section aria-label="Views">
          <div role="tablist" aria-label="Views of the patient's state">
            {views.value.views.map((v) => (
              <button key={v.view_type} type="button" role="tab" aria-selected={v.view_type === current} onClick={() => setShown(v.view_type)}>
                {v.view_type.replace(/_/g, " ")}
              </button>
            ))}
          </div>
          {current && <div role="tabpanel" aria-label={current}><ViewDocument pid={pid} type={current} timeZone={p?.timezone ?? "UTC"} asOf={time.asOf} onShowLogs={setFocus} /></div>}
        </section>
      )}
      {p && <LogTimeline pid={pid} timeZone={p.timezone} asOf={time.asOf} focus={focus} onShowAll={() => setFocus(null)} />}
    </main>
  );
}
