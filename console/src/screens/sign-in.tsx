import { useState } from "preact/hooks";
import { api, ApiError, session, type Me } from "../lib/api.js";

/** Only a JWT goes to session storage (an API key is exchanged for one first), and only while the service accepts it. */
export function SignIn({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const credential = value.trim();
    try {
      // An API key is exchanged for a short-lived JWT before anything is stored (the
      // exchange takes no credential), so only the JWT is ever kept, never the key.
      const token = credential.includes(".")
        ? credential
        : (await api<{ access_token: string }>("POST", "/auth/token", { body: { api_key: credential } })).access_token;
      session.signIn(token);
      onSignedIn(await api<Me>("GET", "/v1/auth/me"));
    } catch (err) {
      session.signOut();
      setError(err instanceof ApiError && err.status === 401 ? "The service did not accept this API key or token." : (err as Error).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>Patient State Service</h1>
      <form onSubmit={(e) => void submit(e)} aria-describedby={error ? "sign-in-error" : undefined}>
        <label for="credential">API key or token</label>
        <input id="credential" name="credential" type="password" autocomplete="off" required value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy}>{busy ? "Signing in..." : "Sign in"}</button>
        {error && <p id="sign-in-error" role="alert" class="error">{error}</p>}
      </form>
    </main>
  );
}
