import { useState } from "preact/hooks";
import { api, type Me } from "../lib/api.js";
import { useAction } from "../lib/use-action.js";
import { Table } from "../lib/table.js";
import { useLoad } from "../lib/use-load.js";
import type { ApiKey, ApiKeyList, CreatedApiKey } from "../../../client/types.js";

/** What each scope lets a key do, as the service's contract says (docs/api.md). */
const SCOPE_LABELS: Record<string, string> = {
  "mcp:patient-state": "MCP: read patient state through the MCP server",
  "sdk:event-log": "Write logs (and read dead letters)",
  "api:manage-patients": "Create, edit and list patients",
  "sdk:state-read": "Read patients' state and views",
  "sdk:patient-token": "Mint patient tokens",
  "sdk:historical-ingest": "Run ingestion jobs",
  "api:manage-projects": "Manage projects, API keys and read the audit trail",
};

/** A key may grant only scopes its creator holds, and never admin:organizations: the form offers just those. */
function grantableScopes(me: Me): string[] {
  return me.scopes.filter((s) => s !== "admin:organizations");
}

function CreateKey({ me, onCreated }: { me: Me; onCreated: (k: CreatedApiKey) => void }) {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<string[]>([]);
  const [bound, setBound] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const a = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    setError(null);
    if (scopes.length === 0) return setError("Choose at least one scope.");
    const body = { name: name.trim(), scopes, ...(bound ? { project: me.project_id } : {}) };
    const ok = await a.run(async () => onCreated(await api<CreatedApiKey>("POST", "/v1/api-keys", { body })));
    if (ok) {
      setName("");
      setScopes([]);
    }
  }
  const toggle = (s: string, on: boolean) => setScopes((cur) => (on ? [...cur, s] : cur.filter((x) => x !== s)));
  return (
    <form class="stack" aria-labelledby="new-key" onSubmit={(e) => void submit(e)}>
      <h2 id="new-key">New API key</h2>
      <label for="key-name">Name</label>
      <input id="key-name" required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      <fieldset>
        <legend>Scopes</legend>
        {grantableScopes(me).map((s) => (
          <label key={s} class="check">
            <input type="checkbox" name="scope" value={s} checked={scopes.includes(s)} onChange={(e) => toggle(s, (e.target as HTMLInputElement).checked)} />
            <code>{s}</code> {SCOPE_LABELS[s] ?? ""}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={bound} onChange={(e) => setBound((e.target as HTMLInputElement).checked)} />
        Bind to the current project (<code>{me.project_id}</code>); otherwise org-wide
      </label>
      <button type="submit" disabled={a.busy}>Create key</button>
      {(error ?? a.error) && <p role="alert" class="error">{error ?? a.error}</p>}
    </form>
  );
}

/** The secret, once: the service keeps only its hash. */
function Secret({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  return (
    <section class="notice" role="status" aria-labelledby="secret-title">
      <h2 id="secret-title">Key "{created.name}" created</h2>
      <label for="new-secret">Secret</label>
      <input id="new-secret" readOnly value={created.key} size={60} onFocus={(e) => (e.target as HTMLInputElement).select()} />
      <p><strong>Copy it now: it will not be shown again.</strong> The service keeps only its hash.</p>
      <button type="button" onClick={onDone}>I have copied it</button>
    </section>
  );
}

function RevokeButton({ k, onRevoked }: { k: ApiKey; onRevoked: () => void }) {
  const [asking, setAsking] = useState(false);
  const a = useAction();
  if (!asking) return <button type="button" onClick={() => setAsking(true)} aria-label={`Revoke ${k.name}`}>Revoke</button>;
  const revoke = async () => {
    if (await a.run(() => api<ApiKey>("DELETE", `/v1/api-keys/${k.id}`))) onRevoked();
  };
  return (
    <span role="group" aria-label={`Confirm revoking ${k.name}`}>
      Revoke "{k.name}" and every token minted from it?{" "}
      <button type="button" onClick={() => void revoke()} disabled={a.busy}>Yes, revoke</button>{" "}
      <button type="button" onClick={() => setAsking(false)}>Cancel</button>
      {a.error && <span role="alert" class="error"> {a.error}</span>}
    </span>
  );
}

/** The organization's API keys: create one with chosen scopes, see its secret once, revoke. */
export function ApiKeys({ me }: { me: Me }) {
  const list = useLoad(() => api<ApiKeyList>("GET", "/v1/api-keys"), []);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  return (
    <main>
      <h1>API keys</h1>
      {created ? <Secret created={created} onDone={() => setCreated(null)} /> : <CreateKey me={me} onCreated={(k) => { setCreated(k); list.reload(); }} />}
      {list.error && <p role="alert" class="error">{list.error.message}</p>}
      {list.value && (
        <Table label="API keys" columns={["Name", "Scopes", "Project", "Created", "State"]}>
          {list.value.api_keys.map((k) => (
            <tr key={k.id} data-key-id={k.id}>
              <td>{k.name} <code>{k.id}</code></td>
              <td>{k.scopes.join(" ")}</td>
              <td>{k.project_id ?? "org-wide"}</td>
              <td>{k.created_at}</td>
              <td>{k.revoked_at ? `Revoked ${k.revoked_at}` : k.id === me.key_id ? "In use by you" : <RevokeButton k={k} onRevoked={list.reload} />}</td>
            </tr>
          ))}
        </Table>
      )}
    </main>
  );
}
