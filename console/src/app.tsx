import { useEffect, useState } from "preact/hooks";
import { api, hasScope, session, type Me } from "./lib/api.js";
import { Ingestion } from "./screens/ingestion.js";
import { IngestionJobScreen } from "./screens/ingestion-job.js";
import { Patient } from "./screens/patient.js";
import { Patients } from "./screens/patients.js";
import { SignIn } from "./screens/sign-in.js";

/** The route in the address's hash: the console is one page the service serves at /console/. */
function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

/** An org-wide credential may work in any project of its organization: X-Project on each request. */
function ProjectSwitcher({ me, onSwitch }: { me: Me; onSwitch: () => void }) {
  const [projects, setProjects] = useState<{ id: string; name: string; slug: string }[] | null>(null);
  useEffect(() => {
    if (me.org_wide && hasScope(me, "api:manage-projects")) {
      api<{ projects: { id: string; name: string; slug: string }[] }>("GET", "/v1/projects").then((r) => setProjects(r.projects), () => setProjects(null));
    }
  }, [me]);
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
        {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
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
  const canPatients = hasScope(me, "api:manage-patients");
  const canIngest = hasScope(me, "sdk:historical-ingest");
  return (
    <>
      <header class="top">
        <nav aria-label="Screens">
          {canPatients && <a href="#/patients">Patients</a>}
          {canIngest && <a href="#/ingestion">Ingestion</a>}
        </nav>
        <ProjectSwitcher me={me} onSwitch={() => void refresh()} />
        <span class="scopes" title="The scopes of this credential">{me.scopes.join(" ")}</span>
        <button type="button" onClick={() => { session.signOut(); setMe(null); }}>Sign out</button>
      </header>
      <Screen me={me} hash={hash} />
    </>
  );
}

/** The screen the hash names, among those the credential's scopes allow; the first allowed one by default. */
function Screen({ me, hash }: { me: Me; hash: string }) {
  const canPatients = hasScope(me, "api:manage-patients");
  const canIngest = hasScope(me, "sdk:historical-ingest");
  const patient = /^#\/patients\/([A-Za-z0-9_-]+)/.exec(hash)?.[1];
  const job = /^#\/ingestion\/([A-Za-z0-9_-]+)/.exec(hash)?.[1];
  if (canPatients && patient) return <Patient key={`${me.project_id}/${patient}`} pid={patient} />;
  if (canIngest && job) return <IngestionJobScreen key={`${me.project_id}/${job}`} id={job} />;
  if (canIngest && (hash.startsWith("#/ingestion") || !canPatients)) return <Ingestion key={me.project_id} />;
  if (canPatients) return <Patients key={me.project_id} />;
  return (
    <main>
      <p role="alert">This credential has none of the scopes the console's screens need (api:manage-patients to list patients, sdk:historical-ingest for ingestion jobs).</p>
    </main>
  );
}
