import { useState } from "preact/hooks";
import { api } from "../lib/api.js";
import { projectsChanged } from "../lib/projects-changed.js";
import { useAction } from "../lib/use-action.js";
import { Table } from "../lib/table.js";
import { useLoad } from "../lib/use-load.js";
import type { Project, ProjectList } from "../../../client/types.js";

function CreateProject({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const [environment, setEnvironment] = useState("");
  const a = useAction();
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { name: name.trim(), ...(environment.trim() ? { environment: environment.trim() } : {}) };
    if (await a.run(() => api<Project>("POST", "/v1/projects", { body }))) {
      setName("");
      setEnvironment("");
      onCreated();
    }
  };
  return (
    <form class="inline" aria-labelledby="new-project" onSubmit={(e) => void submit(e)}>
      <h2 id="new-project">New project</h2>
      <label for="project-name">Name</label>
      <input id="project-name" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <label for="project-env">Environment (optional)</label>
      <input id="project-env" maxLength={64} placeholder="dev, staging, prod" value={environment} onInput={(e) => setEnvironment((e.target as HTMLInputElement).value)} />
      <button type="submit" disabled={a.busy}>Create project</button>
      {a.error && <p role="alert" class="error">{a.error}</p>}
    </form>
  );
}

/** One project's row: rename in place, deprecate (never the default one) or restore. */
function ProjectRow({ p, onChanged }: { p: Project; onChanged: () => void }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(p.name);
  const a = useAction();
  const call = async (method: "PATCH" | "POST", path: string, body?: unknown) => {
    if (await a.run(() => api<Project>(method, path, body === undefined ? {} : { body }))) {
      setEditing(false);
      onChanged();
    }
  };
  const inputId = `rename-${p.id}`;
  return (
    <tr data-project-id={p.id}>
      <td>
        {editing ? (
          <form class="inline" onSubmit={(e) => { e.preventDefault(); void call("PATCH", `/v1/projects/${p.id}`, { name: name.trim() }); }}>
            <label for={inputId}>New name of {p.name}</label>
            <input id={inputId} required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
            <button type="submit" disabled={a.busy}>Save</button>
            <button type="button" onClick={() => { setEditing(false); setName(p.name); }}>Cancel</button>
          </form>
        ) : (
          <>{p.name}{p.is_default ? " (default)" : ""}</>
        )}
      </td>
      <td><code>{p.slug}</code></td>
      <td>{p.environment ?? ""}</td>
      <td>{p.status === "deprecated" ? `Deprecated ${p.deprecated_at ?? ""}` : "Active"}</td>
      <td>
        {!editing && <button type="button" aria-label={`Rename ${p.name}`} onClick={() => setEditing(true)}>Rename</button>}{" "}
        {p.status === "active" && !p.is_default && (
          <button type="button" aria-label={`Deprecate ${p.name}`} onClick={() => void call("POST", `/v1/projects/${p.id}/deprecate`)} disabled={a.busy}>Deprecate</button>
        )}
        {p.status === "deprecated" && (
          <button type="button" aria-label={`Restore ${p.name}`} onClick={() => void call("POST", `/v1/projects/${p.id}/restore`)} disabled={a.busy}>Restore</button>
        )}
        {a.error && <p role="alert" class="error">{a.error}</p>}
      </td>
    </tr>
  );
}

/** The organization's projects, deprecated ones included: create, rename, deprecate, restore. */
export function Projects() {
  const list = useLoad(() => api<ProjectList>("GET", "/v1/projects"), []);
  const changed = () => {
    list.reload();
    projectsChanged();
  };
  return (
    <main>
      <h1>Projects</h1>
      <CreateProject onCreated={changed} />
      {list.error && <p role="alert" class="error">{list.error.message}</p>}
      {list.value && (
        <Table label="Projects" columns={["Name", "Slug", "Environment", "Status", "Actions"]}>
          {list.value.projects.map((p) => <ProjectRow key={`${p.id}/${p.name}/${p.status}`} p={p} onChanged={changed} />)}
        </Table>
      )}
    </main>
  );
}
