import { api } from "../lib/api.js";
import { beforeAfter, words, type FieldChange } from "../lib/field-change.js";
import { useLoad } from "../lib/use-load.js";
import { wallClock } from "../lib/zoned-time.js";
import type { StateChanges, StateDiff } from "../../../client/types.js";

/** The clinical domains of GET /v1/state/{pid}/changes, in the order a clinician reads them. */
const DOMAINS = [
  ["symptoms", "Symptoms"], ["labs", "Labs"], ["medications", "Medications"], ["vitals", "Vitals"],
  ["devices", "Device readings"], ["questionnaires", "Questionnaires"], ["encounters", "Encounters"],
] as const;

/** The answer's summary as a sentence of its own. */
const sentence = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}${/[.!?]$/.test(s) ? "" : "."}`;

/** The button's words, which its accessible name starts with (WCAG 2.5.3). */
const showLabel = (n: number) => (n === 1 ? "Show log" : `Show ${n} logs`);

/** A field's change in a line: before → after, as the job review's preview shows them. */
function fieldLine(f: FieldChange): string {
  const [before, after] = beforeAfter(f);
  return `${words(f.field)}: ${before} → ${after}`;
}

/**
 * What changed for the patient since a visit (up to the time shown, or now): each clinical
 * domain's changes with a button to the logs behind them, and every module field that differs.
 */
export function ChangesSince({ pid, since, until, timeZone, onShowLogs }: { pid: string; since: string; until?: string; timeZone: string; onShowLogs: (ids: string[]) => void }) {
  const changes = useLoad(() => api<StateChanges>("GET", `/v1/state/${pid}/changes`, { query: { since, until } }), [pid, since, until]);
  const diff = useLoad(() => api<StateDiff>("GET", `/v1/state/${pid}/diff`, { query: { from: since, to: until } }), [pid, since, until]);
  const c = changes.value;
  return (
    <section aria-labelledby="changes-heading" class="changes-since">
      <h2 id="changes-heading">Changes since {wallClock(since, timeZone)}{until ? ` until ${wallClock(until, timeZone)}` : ""}</h2>
      {changes.error && <p role="alert" class="error">{changes.error.message}</p>}
      {c && (
        <>
          <p>{sentence(c.summary)} {c.logs_in_window.total} logs in the window{c.logs_in_window.total > 0 && `: ${Object.entries(c.logs_in_window.by_type).map(([t, n]) => `${n} ${t}`).join(", ")}`}.</p>
          {DOMAINS.filter(([k]) => c[k].length > 0).map(([k, label]) => (
            <section key={k} aria-label={label}>
              <h3>{label}</h3>
              <ul>
                {c[k].map((item, i) => (
                  <li key={i}>
                    <strong>{item.kind.replace(/_/g, " ")}</strong>: {item.what} ({wallClock(item.at, timeZone)}){" "}
                    <button type="button" onClick={() => onShowLogs(item.log_ids)} aria-label={`${showLabel(item.log_ids.length)} of ${item.what}`}>
                      {showLabel(item.log_ids.length)}
                    </button>
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </>
      )}
      {diff.error && <p role="alert" class="error">{diff.error.message}</p>}
      {diff.value && diff.value.modules.length > 0 && (
        <details>
          <summary>Every field that changed ({diff.value.modules.length} modules)</summary>
          <ul class="diff">
            {diff.value.modules.map((m) => (
              <li key={m.module_type}>
                {words(m.module_type)} ({m.op})
                <ul>{m.fields.map((f) => <li key={f.field}>{fieldLine(f)}</li>)}</ul>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
