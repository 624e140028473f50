import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** One stored login: a JWT from POST /auth/token for one service address. */
export interface StoredLogin {
  url: string;
  access_token: string;
  /** ISO 8601; the JWT is refused after this. */
  expires_at: string;
  project?: string;
}

interface CredentialsFile {
  /** Logins by service URL, so a token is never sent to another service than the one that issued it. */
  logins: Record<string, StoredLogin>;
}

/** $XDG_CONFIG_HOME/pss/credentials.json, else ~/.config/pss/credentials.json. */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== "" ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  return join(base, "pss", "credentials.json");
}

async function readAll(path: string): Promise<CredentialsFile> {
  try {
    const parsed = JSON.parse(await readFile(path, "utf8")) as Partial<CredentialsFile>;
    return { logins: parsed.logins ?? {} };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { logins: {} };
    throw new Error(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

/** Writes through a temporary file created 0600, so the token is never readable by others, even briefly. */
async function writeAll(path: string, data: CredentialsFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}

export async function loadLogin(url: string, env?: NodeJS.ProcessEnv): Promise<StoredLogin | undefined> {
  return (await readAll(credentialsPath(env))).logins[url];
}

export async function saveLogin(login: StoredLogin, env?: NodeJS.ProcessEnv): Promise<string> {
  const path = credentialsPath(env);
  const all = await readAll(path);
  all.logins[login.url] = login;
  await writeAll(path, all);
  return path;
}

/** Removes the login of one URL; the file goes when it holds none. Returns whether there was one. */
export async function removeLogin(url: string, env?: NodeJS.ProcessEnv): Promise<boolean> {
  const path = credentialsPath(env);
  const all = await readAll(path);
  if (!all.logins[url]) return false;
  delete all.logins[url];
  if (Object.keys(all.logins).length === 0) await rm(path, { force: true });
  else await writeAll(path, all);
  return true;
}
