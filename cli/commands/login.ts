import { createInterface } from "node:readline";
import { PatientStateClient } from "../../client/index.js";
import { credentialsPath, removeLogin, saveLogin } from "../credentials.js";
import { noMoreArgs, serviceUrl, str, UsageError, type Command, type Io } from "../command.js";
import { json } from "../output.js";

/** The key from --api-key or PSS_API_KEY, else the first line of stdin (so it stays out of shell history). */
async function apiKey(values: Record<string, unknown>, io: Io): Promise<string> {
  const given = str(values["api-key"] as string | undefined) ?? (io.env.PSS_API_KEY || undefined);
  if (given) return given;
  if (io.stdin.isTTY) io.err("API key: ");
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    for await (const line of rl) if (line.trim() !== "") return line.trim();
  } finally {
    rl.close();
  }
  throw new UsageError("no API key: pass --api-key, set PSS_API_KEY or type it on stdin");
}

export const loginCommand: Command = {
  name: "login",
  summary: "Exchange an API key for a JWT and store it for later commands",
  help: `Usage: pss login [--api-key KEY] [--url URL] [--project ID|SLUG]

Exchanges the API key (from --api-key, PSS_API_KEY, or typed on stdin) for a short-lived
JWT (POST /auth/token) and stores it in $XDG_CONFIG_HOME/pss/credentials.json (else
~/.config/pss/credentials.json), readable only by you (mode 0600), under the service URL.
Later commands without --api-key or PSS_API_KEY use it for that URL. The API key itself is
not stored. The JWT expires (15 minutes by default): log in again when told.

  pss logout         Removes the stored login for the URL.`,
  options: {},
  async run({ args, values, io }) {
    // Not echoed: the argument is likely the key itself.
    if (args.length > 0) throw new UsageError("pss login takes no argument: give the key as --api-key KEY, in PSS_API_KEY or on stdin");
    const url = serviceUrl(values, io.env);
    const key = await apiKey(values, io);
    const token = await new PatientStateClient({ baseUrl: url }).auth.token(key);
    const expires_at = new Date(Date.now() + token.expires_in * 1000).toISOString();
    const project = str(values.project) ?? (io.env.PSS_PROJECT || undefined);
    const path = await saveLogin({ url, access_token: token.access_token, expires_at, ...(project ? { project } : {}) }, io.env);
    if (values.json) io.out(`${json({ url, expires_at, path })}\n`);
    else io.out(`Logged in to ${url}; the token expires at ${expires_at} (stored in ${path}).\n`);
    return 0;
  },
};

export const logoutCommand: Command = {
  name: "logout",
  summary: "Forget the stored login for the service URL",
  help: `Usage: pss logout [--url URL]

Removes the JWT that \`pss login\` stored for the URL from ${"$"}XDG_CONFIG_HOME/pss/credentials.json.`,
  options: {},
  async run({ args, values, io }) {
    noMoreArgs(args, 0, "pss logout takes no argument (--url URL names the service)");
    const url = serviceUrl(values, io.env);
    const had = await removeLogin(url, io.env);
    io.out(had ? `Logged out of ${url}.\n` : `No stored login for ${url} (${credentialsPath(io.env)}).\n`);
    return 0;
  },
};
