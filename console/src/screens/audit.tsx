import { useState } from "preact/hooks";
import { api } from "../lib/api.js";
import { useCursors } from "../lib/cursor-pages.js";
import { Table } from "../lib/table.js";
import { useLoad } from "../lib/use-load.js";
import type { AuditPage } from "../../../client/types.js";

const PAGE = 50;

interface Filters {
  patient_id: string;
  key_id: string;
  route: string;
  since: string;
  until: string;
}
const NONE: Filters = { patient_id: "", key_id: "", route: "", since: "", until: "" };

/** A datetime-local field's value (local time, no offset) as the ISO 8601 instant the route takes. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

const FIELDS: { name: keyof Filters; label: string; type: "text" | "datetime-local" }[] = [
  { name: "patient_id", label: "Patient id", type: "text" },
  { name: "key_id", label: "API key id", type: "text" },
  { name: "route", label: "Route (e.g. /v1/projects/:id)", type: "text" },
  { name: "since", label: "From (your local time)", type: "datetime-local" },
  { name: "until", label: "Until (your local time)", type: "datetime-local" },
];

/**
 * The organization's audit trail, oldest first, filtered by patient, key, route and time,
 * a page at a time by the service's cursor.
 */
export function Audit() {
  const [draft, setDraft] = useState<Filters>(NONE);
  const [applied, setApplied] = useState<Filters>(NONE);
  const { cursor, reset, pager } = useCursors();
  const page = useLoad(
    () =>
      api<AuditPage>("GET", "/v1/audit", {
        query: {
          limit: PAGE,
          cursor,
          patient_id: applied.patient_id.trim(),
          key_id: applied.key_id.trim(),
          route: applied.route.trim(),
          since: instant(applied.since),
          until: instant(applied.until),
        },
      }),
    [applied, cursor],
  );
  return (
    <main>
      <h1>Audit trail</h1>
      <form
        class="filters"
        aria-label="Audit filters"
        onSubmit={(e) => {
          e.preventDefault();
          reset();
          setApplied(draft);
        }}
      >
        {FIELDS.map((f) => {
          const field = { id: `audit-${f.name}`, value: draft[f.name], onInput: (e: Event) => setDraft({ ...draft, [f.name]: (e.target as HTMLInputElement).value }) };
          return (
            <span key={f.name} class="field">
              <label for={field.id}>{f.label}</label>
              {f.type === "text" ? <input type="text" {...field} /> : <input type="datetime-local" {...field} />}
            </span>
          );
        })}
        <button type="submit">Filter</button>
        <button type="button" onClick={() => { setDraft(NONE); setApplied(NONE); reset(); }}>Clear</button>
      </form>
      {page.error && <p role="alert" class="error">{page.error.message}</p>}
      {page.value && (
        <>
          <p aria-live="polite">{page.value.count} entries on this page</p>
          <Table label="Audit entries" columns={["When", "Request", "Status", "Patients", "Key", "Project"]}>
            {page.value.entries.map((e) => (
              <tr key={e.id}>
                <td>{e.at}</td>
                <td><code>{e.method} {e.route}</code>{e.tool ? ` (${e.tool})` : ""}</td>
                <td>{e.status}</td>
                <td>{e.patient_ids.join(", ")}{e.patient_ids_omitted ? ` and ${e.patient_ids_omitted} more` : ""}</td>
                <td><code>{e.key_id}</code> ({e.credential})</td>
                <td><code>{e.project_id}</code></td>
              </tr>
            ))}
          </Table>
          {pager(page.value.next_cursor)}
        </>
      )}
    </main>
  );
}
