import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../lib/api.js";
import { useLoad } from "../lib/use-load.js";
import { endOfDay, startOfDay, wallClock } from "../lib/zoned-time.js";
import type { EventPage, LogPage, LogRow } from "../../../client/types.js";

type Change = EventPage["events"][number]["changes"][number];

/** A date input's day in the patient's zone as the API's bound: the day's start (since) or its end (until). */
const bound = (day: string, end: boolean, timeZone: string) => (day ? (end ? endOfDay : startOfDay)(day, timeZone) : undefined);

/** The earlier of two bounds, either absent. */
const earlier = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined || a < b ? a : b);

/**
 * The patient's logs, newest first, filtered by type and day, each with its payload and the
 * state changes it caused (from the events audit of the same window). With `asOf`, the logs
 * up to it; with `focus`, only the logs named (a view entry's or a change's), brought into view.
 */
export function LogTimeline({ pid, timeZone, asOf, focus, onShowAll }: { pid: string; timeZone: string; asOf?: string; focus: string[] | null; onShowAll: () => void }) {
  const [types, setTypes] = useState("");
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  const [applied, setApplied] = useState({ types: "", since: "", until: "" });
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const heading = useRef<HTMLHeadingElement>(null);
  const named = focus?.join(",");
  const query = named
    ? { log_ids: named }
    : { log_types: applied.types || undefined, since: bound(applied.since, false, timeZone), until: earlier(bound(applied.until, true, timeZone), asOf) };
  const logs = useLoad(() => api<LogPage>("GET", `/v1/state/${pid}/logs`, { query: { ...query, limit: named ? 100 : 25, cursor: named ? undefined : cursor } }), [pid, applied, cursor, asOf, named]);
  // The events of the logs on the page, by id: the audit's since/until bound when a log was applied, not its event time.
  const shownIds = logs.value?.logs.map((l) => l.id).join(",");
  const events = useLoad(
    () => (shownIds ? api<EventPage>("GET", `/v1/state/${pid}/events`, { query: { log_ids: shownIds, limit: 500 } }) : Promise.resolve(undefined)),
    [pid, shownIds],
  );
  useEffect(() => {
    if (named) heading.current?.focus();
  }, [named]);
  const changesOf = new Map<string, Change[]>();
  for (const e of events.value?.events ?? []) changesOf.set(e.source_event_log_id, [...(changesOf.get(e.source_event_log_id) ?? []), ...e.changes]);
  return (
    <section aria-labelledby="timeline-heading" class="timeline">
      <h2 id="timeline-heading" ref={heading} tabIndex={-1}>{focus ? `Log timeline: only the ${focus.length === 1 ? "log" : `${focus.length} logs`} you chose` : "Log timeline"}</h2>
      {focus && <p><button type="button" onClick={onShowAll}>Show all logs</button></p>}
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setCursor(undefined);
          setApplied({ types: types.trim(), since, until });
        }}
      >
        <label>Log types (comma-separated)<input value={types} onInput={(e) => setTypes((e.target as HTMLInputElement).value)} /></label>
        <label>From day<input type="date" value={since} onInput={(e) => setSince((e.target as HTMLInputElement).value)} /></label>
        <label>To day<input type="date" value={until} onInput={(e) => setUntil((e.target as HTMLInputElement).value)} /></label>
        <button type="submit">Filter logs</button>
      </form>
      {logs.error && <p role="alert" class="error">{logs.error.message}</p>}
      {logs.value && (
        <>
          <table>
            <thead><tr><th scope="col">Event time ({timeZone})</th><th scope="col">Type</th><th scope="col">Payload</th><th scope="col">State changes</th><th scope="col">Log</th></tr></thead>
            <tbody>
              {logs.value.logs.map((l: LogRow) => (
                <tr key={l.id} data-log-id={l.id}>
                  <td><time dateTime={l.timestamp}>{wallClock(l.timestamp, timeZone)}</time></td>
                  <td>{l.type}</td>
                  <td><details><summary>payload</summary><pre class="json">{JSON.stringify(l.payload, null, 2)}</pre></details></td>
                  <td>
                    <ul class="changes">
                      {(changesOf.get(l.id) ?? []).map((c, i) => <li key={i}>{c.module_type}: {c.op} {c.kind}{c.fields?.length ? ` (${c.fields.join(", ")})` : ""}</li>)}
                    </ul>
                  </td>
                  <td><code class="log-id">{l.id}</code></td>
                </tr>
              ))}
            </tbody>
          </table>
          {logs.value.logs.length === 0 && <p>No logs in this window.</p>}
          <nav aria-label="Timeline pages">
            <button type="button" disabled={cursor === undefined} onClick={() => setCursor(undefined)}>Newest</button>
            <button type="button" disabled={!logs.value.next_cursor} onClick={() => setCursor(logs.value?.next_cursor ?? undefined)}>Older</button>
          </nav>
        </>
      )}
    </section>
  );
}
