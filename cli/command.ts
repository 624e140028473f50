import type { ParseArgsConfig } from "node:util";
import { PatientStateClient } from "../client/index.js";
import { loadLogin } from "./credentials.js";

export type Options = NonNullable<ParseArgsConfig["options"]>;
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** Where a command reads and writes; tests and main() pass the process's own. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  /** stderr is a terminal: progress redraws in place. */
  errIsTTY: boolean;
}

export interface Invocation {
  values: Values;
  /** Arguments after the command name (a subcommand first, for commands that have them). */
  args: string[];
  io: Io;
  /** The service address from --url, PSS_URL or the default. */
  url: string;
  /** A client with the credential from --api-key, PSS_API_KEY or the stored login. */
  client: () => Promise<PatientStateClient>;
}

export interface Command {
  name: string;
  summary: string;
  /** Full help text: usage, arguments, options, examples. */
  help: string;
  options: Options;
  /** The exit code. */
  run(inv: Invocation): Promise<number>;
}

/** A mistake in how the command was called: exit code 2 and a pointer to --help. */
export class UsageError extends Error {
  override name = "UsageError";
}

export const DEFAULT_URL = "http://127.0.0.1:8080";

export const GLOBAL_OPTIONS: Options = {
  url: { type: "string" },
  "api-key": { type: "string" },
  project: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

export const GLOBAL_HELP = `Global options:
  --url URL          Service address (env PSS_URL; default ${DEFAULT_URL})
  --api-key KEY      API key (env PSS_API_KEY; else the token stored by \`pss login\`)
  --project ID|SLUG  Project for org-wide keys, sent as X-Project (env PSS_PROJECT)
  --json             Print JSON instead of text
  -h, --help         Show help`;

const nonEmpty = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

export function serviceUrl(values: Values, env: NodeJS.ProcessEnv): string {
  return (nonEmpty(values.url) ?? nonEmpty(env.PSS_URL) ?? DEFAULT_URL).replace(/\/+$/, "");
}

/** The client for a command: an explicit API key wins; else the stored login for this URL, if still valid. */
export async function makeClient(values: Values, env: NodeJS.ProcessEnv): Promise<PatientStateClient> {
  const baseUrl = serviceUrl(values, env);
  const project = nonEmpty(values.project) ?? nonEmpty(env.PSS_PROJECT);
  const apiKey = nonEmpty(values["api-key"]) ?? nonEmpty(env.PSS_API_KEY);
  if (apiKey !== undefined) return new PatientStateClient({ baseUrl, apiKey, ...(project ? { project } : {}) });
  const login = await loadLogin(baseUrl, env);
  if (!login) throw new UsageError(`no credential for ${baseUrl}: pass --api-key, set PSS_API_KEY, or run \`pss login\``);
  if (Date.parse(login.expires_at) <= Date.now()) {
    throw new Error(`the stored login for ${baseUrl} expired at ${login.expires_at}; run \`pss login\` again`);
  }
  const p = project ?? login.project;
  return new PatientStateClient({ baseUrl, token: login.access_token, ...(p ? { project: p } : {}) });
}

/** A string option, or undefined. */
export const str = (v: Values[string]): string | undefined => (typeof v === "string" ? v : undefined);
/** A repeatable option, each occurrence also split at commas. */
export const list = (v: Values[string]): string[] =>
  (Array.isArray(v) ? v : v === undefined ? [] : [v]).flatMap((x) => String(x).split(",")).map((s) => s.trim()).filter(Boolean);
/** A positive integer option. */
export function int(v: Values[string], name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--${name} must be a whole number, got ${String(v)}`);
  return n;
}
/**
 * Refuses positionals past the first `taken`: `pss validate *.jsonl` would otherwise check
 * the first file alone and pass. `usage` says what the command takes.
 */
export function noMoreArgs(args: string[], taken: number, usage: string): void {
  const extra = args[taken];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}: ${usage}`);
}

/** A whole number of at least 1 (a page, a size), or undefined. */
export function positiveInt(v: Values[string], name: string): number | undefined {
  const n = int(v, name);
  if (n === 0) throw new UsageError(`--${name} must be at least 1`);
  return n;
}

/** The positional at `i`, or a usage error naming it. */
export function arg(args: string[], i: number, name: string): string {
  const v = args[i];
  if (v === undefined) throw new UsageError(`missing ${name}`);
  return v;
}
