import { useState } from "preact/hooks";
import { api } from "../lib/api.js";
import { useLoad } from "../lib/use-load.js";
import { PatientForm } from "./patient-form.js";
import type { Patient } from "../../../client/types.js";

const PAGE = 25;

/** Patients of the project, a page at a time, found by name or by an external identifier (system|value). */
export function Patients() {
  const [offset, setOffset] = useState(0);
  const [search, setSearch] = useState("");
  const [applied, setApplied] = useState("");
  const [creating, setCreating] = useState(false);
  const query = (() => {
    const bar = applied.indexOf("|");
    if (bar > 0) return { system: applied.slice(0, bar), value: applied.slice(bar + 1) };
    return applied ? { name: applied } : {};
  })();
  const list = useLoad(() => api<{ patients: Patient[]; total: number; has_more: boolean }>("GET", "/v1/patients", { query: { limit: PAGE, offset, ...query } }), [offset, applied]);
  return (
    <main>
      <h1>Patients</h1>
      {creating ? (
        <PatientForm onSaved={(p) => (location.hash = `#/patients/${p.id}`)} onCancel={() => setCreating(false)} />
      ) : (
        <p><button type="button" onClick={() => setCreating(true)}>New patient</button></p>
      )}
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setApplied(search.trim());
        }}
      >
        <label for="patient-search">Name, or identifier as system|value</label>
        <input id="patient-search" type="search" value={search} onInput={(e) => setSearch((e.target as HTMLInputElement).value)} />
        <button type="submit">Search</button>
      </form>
      {list.error && <p role="alert" class="error">{list.error.message}</p>}
      {list.value && (
        <>
          <p aria-live="polite">{list.value.total} patients{applied ? ` matching "${applied}"` : ""}</p>
          <table>
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Date of birth</th><th scope="col">Identifiers</th><th scope="col">Id</th></tr>
            </thead>
            <tbody>
              {list.value.patients.map((p) => (
                <tr key={p.id}>
                  <td><a href={`#/patients/${p.id}`}>{[p.first_name, p.last_name].filter(Boolean).join(" ") || "(no name)"}</a></td>
                  <td>{p.date_of_birth ?? ""}</td>
                  <td>{p.external_identifiers.map((e) => `${e.system}|${e.value}`).join(", ")}</td>
                  <td><code>{p.id}</code></td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav aria-label="Pages">
            <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous</button>
            <span>{list.value.total === 0 ? "" : `${offset + 1}-${offset + list.value.patients.length} of ${list.value.total}`}</span>
            <button type="button" disabled={!list.value.has_more} onClick={() => setOffset(offset + PAGE)}>Next</button>
          </nav>
        </>
      )}
    </main>
  );
}
