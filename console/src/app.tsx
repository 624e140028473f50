import { useEffect, useState } from "preact/hooks";
import { api, hasScope, session, type Me } from "./lib/api.js";
import { useProjectsVersion } from "./lib/projects-changed.js";
import { ApiKeys } from "./screens/api-keys.js";
import { Audit } from "./screens/audit.js";
import { DeadLetters } from "./screens/dead-letters.js";
import { Ingestion } from "./screens/ingestion.js";
import { IngestionJobScreen } from "./screens/ingestion-job.js";
import { LogQuery } from "./screens/log-query.js";
import { Patient } from "./screens/patient.js";
import { Patients } from "./screens/patients.js";
import { Projects } from "./screens/projects.js";
import { SignIn } from "./screens/sign-in.js";
import type { JSX } from "preact";
import type { Project, ProjectList } from "../../client/types.js";

/** A screen of the nav: shown only to a credential the service lets use its routes. */
interface Screen {
  path: string;
  label: string;
  /** What the screen's routes need, in words for the page that says why none is shown. */
  needs: string;
  allowed: (me: Me) => boolean;
  /** `id`: the item the address names after the screen's path (#/patients/<id>). */
  render: (me: Me, id: string | undefined) => JSX.Element;
}

/** Administration routes take an org-wide key with api:manage-projects (app/http/routes/projects.ts). */
const admin = (me: Me) => me.org_wide && hasScope(me, "api:manage-projects");

const SCREENS: Screen[] = [
  {
    path: "#/patients", label: "Patients", needs: "api:manage-patients for patients", allowed: (me) => hasScope(me, "api:manage-patients"),
    render: (me, id) => (id ? <Patient key={`${me.project_id}/${id}`} pid={id} /> : <Patients key={me.project_id} />),
  },
  {
    path: "#/ingestion", label: "Ingestion", needs: "sdk:historical-ingest for ingestion jobs", allowed: (me) => hasScope(me, "sdk:historical-ingest"),
    render: (me, id) => (id ? <IngestionJobScreen key={`${me.project_id}/${id}`} id={id} /> : <Ingestion key={me.project_id} />),
  },
  { path: "#/query", label: "Log query", needs: "sdk:state-read for the log query", allowed: (me) => hasScope(me, "sdk:state-read"), render: (me) => <LogQuery key={me.project_id} /> },
  { path: "#/projects", label: "Projects", needs: "an org-wide key with api:manage-projects for projects, API keys and the audit trail", allowed: admin, render: () => <Projects /> },
  { path: "#/api-keys", label: "API keys", needs: "", allowed: admin, render: (me) => <ApiKeys me={me} /> },
  { path: "#/audit", label: "Audit", needs: "", allowed: admin, render: () => <Audit /> },
  // A patient token holds sdk:event-log for its patient but may not read the project's letters.
  { path: "#/dead-letters", label: "Dead letters", needs: "sdk:event-log for dead letters", allowed: (me) => hasScope(me, "sdk:event-log") && me.patient_id === undefined, render: (me) => <DeadLetters key={me.project_id} /> },
];

/** The route in the address's hash: the console is one page the service serves at /console/. */
function useHash(): string {
  const [hash, setHash] = useState(location.hash || "#/patients");
  useEffect(() => {
    const on = () => setHash(location.hash || "#/patients");
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

/** An org-wide credential may work in any project of its organization: X-Project on each request. */
function ProjectSwitcher({ me, onSwitch }: { me: Me; onSwitch: () => void }) {
  const [projects, setProjects] = useState<Project[] | null>(null);
  // Loaded again when the Projects screen changes one, so a project made there can be picked at once.
  const version = useProjectsVersion();
  useEffect(() => {
    if (me.org_wide && hasScope(me, "api:manage-projects")) {
      api<ProjectList>("GET", "/v1/projects").then((r) => setProjects(r.projects), () => setProjects(null));
    }
  }, [me, version]);
  if (!projects) return <span>Project <code>{me.project_id}</code></span>;
  return (
    <label>
      Project{" "}
      <select
        value={session.project() ?? me.project_id}
        onChange={(e) => {
          session.pickProject((e.target as HTMLSelectElement).value);
          onSwitch();
        }}
      >
        {projects.map((p) => <option key={p.id} value={p.id}>{p.name}{p.status === "deprecated" ? " (deprecated)" : ""}</option>)}
      </select>
    </label>
  );
}

export function App() {
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(false);
  const hash = useHash();
  const refresh = () => api<Me>("GET", "/v1/auth/me").then(setMe, () => setMe(null)).finally(() => setChecked(true));
  useEffect(() => {
    if (session.credential()) void refresh();
    else setChecked(true);
  }, []);
  if (!checked) return <p>Loading...</p>;
  if (!me) return <SignIn onSignedIn={setMe} />;
  const screens = SCREENS.filter((sc) => sc.allowed(me));
  const named = SCREENS.find((sc) => hash === sc.path || hash.startsWith(`${sc.path}/`));
  const current = named && screens.includes(named) ? named : named ? undefined : screens[0];
  const id = current && hash.startsWith(`${current.path}/`) ? /^[A-Za-z0-9_-]+/.exec(hash.slice(current.path.length + 1))?.[0] : undefined;
  const needs = SCREENS.map((sc) => sc.needs).filter(Boolean).join("; ");
  return (
    <>
      <header class="top">
        <nav aria-label="Screens">
          {screens.map((sc) => <a key={sc.path} href={sc.path} aria-current={sc === current ? "page" : undefined}>{sc.label}</a>)}
        </nav>
        <ProjectSwitcher me={me} onSwitch={() => void refresh()} />
        <span class="scopes" title="The scopes of this credential">{me.scopes.join(" ")}</span>
        <button type="button" onClick={() => { session.signOut(); setMe(null); }}>Sign out</button>
      </header>
      {current ? current.render(me, id) : named ? (
        <main><p role="alert">The {named.label} screen needs {named.needs || SCREENS.find((sc) => sc.allowed === named.allowed && sc.needs)?.needs}, which this credential does not have.</p></main>
      ) : (
        <main><p role="alert">This credential has none of the scopes the console's screens need ({needs}).</p></main>
      )}
    </>
  );
}
