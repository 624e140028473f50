import type { LogQueryBody } from "../../../client/types.js";

/** Where `pss` looks when neither --url nor PSS_URL is given (cli/command.ts DEFAULT_URL). */
export const CLI_DEFAULT_URL = "http://127.0.0.1:8080";

/** Words a POSIX shell reads as themselves, unquoted. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * A word for a POSIX shell: as it is when it holds only plain characters, else in single
 * quotes, within which nothing is special but the quote itself, written as '\'' (close,
 * an escaped quote, reopen).
 */
export function shellQuote(word: string): string {
  if (PLAIN.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** What the command needs besides the body: the service address and the project picked, if any. */
export interface CommandContext {
  /** The console's origin; left out when it is the CLI's default. */
  url?: string;
  /** The project picked in the switcher (sent as X-Project); absent for the credential's own. */
  project?: string | null;
}

/**
 * The `pss query` command that sends the same body as the form: `--body` carries all of
 * it (conditions, grouping and aggregations have no flag of their own), so the command
 * and the console ask the same question. The credential is never part of it: the CLI
 * reads it from PSS_API_KEY or `pss login`.
 */
export function pssQueryCommand(body: LogQueryBody, ctx: CommandContext = {}): string {
  const words = ["pss", "query"];
  const url = ctx.url?.replace(/\/+$/, "");
  if (url && url !== CLI_DEFAULT_URL) words.push("--url", shellQuote(url));
  if (ctx.project) words.push("--project", shellQuote(ctx.project));
  words.push("--body", shellQuote(JSON.stringify(body)));
  return words.join(" ");
}
