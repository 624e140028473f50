import { useEffect, useState } from "preact/hooks";
import { api, hasScope, session, type Me } from "./lib/api.js";
import { Ingestion } from "./screens/ingestion.js";
import { IngestionJobScreen } from "./screens/ingestion-job.js";
import { LogQuery } from "./screens/log-query.js";
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
  return (
    <>
      <header class="top">
        <nav aria-label="Screens">
          {SCREENS.filter((x) => hasScope(me, x.scope)).map((x) => <a key={x.route} href={x.route}>{x.name}</a>)}
        </nav>
        <ProjectSwitcher me={me} onSwitch={() => void refresh()} />
        <span class="scopes" title="The scopes of this credential">{me.scopes.join(" ")}</span>
        <button type="button" onClick={() => { session.signOut(); setMe(null); }}>Sign out</button>
      </header>
      <Screen me={me} hash={hash} />
    </>
  );
}

/** The screens, each with the scope it needs; the first the credential may use is the default. */
const SCREENS = [
  { route: "#/patients", name: "Patients", scope: "api:manage-patients" },
  { route: "#/ingestion", name: "Ingestion", scope: "sdk:historical-ingest" },
  { route: "#/query", name: "Log query", scope: "sdk:state-read" },
] as const;

/** The screen the hash names if the credential's scopes allow it, else why not; no hash: the first allowed one. */
function Screen({ me, hash }: { me: Me; hash: string }) {
  const named = SCREENS.find((x) => hash.startsWith(x.route));
  const screen = named ?? SCREENS.find((x) => hasScope(me, x.scope));
  if (!screen) {
    return <main><p role="alert">This credential has none of the scopes the console's screens need ({SCREENS.map((x) => `${x.scope} for ${x.name}`).join(", ")}).</p></main>;
  }
  if (!hasScope(me, screen.scope)) return <main><p role="alert">The {screen.name} screen needs the scope {screen.scope}, which this credential does not have.</p></main>;
  const id = /^#\/[a-z]+\/([A-Za-z0-9_-]+)/.exec(hash)?.[1];
  const key = `${me.project_id}/${id ?? ""}`;
  switch (screen.route) {
    case "#/patients":
      return id ? <Patient key={key} pid={id} /> : <Patients key={key} />;
    case "#/ingestion":
      return id ? <IngestionJobScreen key={key} id={id} /> : <Ingestion key={key} />;
    case "#/query":
      return <LogQuery key={key} />;
    default: {
      const never: never = screen;
      return never;
    }
  }
}
