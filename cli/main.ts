import { parseArgs } from "node:util";
import { AuthenticationError, PssError, ValidationError } from "../client/index.js";
import { GLOBAL_HELP, GLOBAL_OPTIONS, makeClient, serviceUrl, UsageError, type Command, type Io, type Values } from "./command.js";
import { jobsCommand, ingestCommand } from "./commands/ingest.js";
import { keysCommand, projectsCommand } from "./commands/admin.js";
import { loginCommand, logoutCommand } from "./commands/login.js";
import { fhirCommand } from "./commands/fhir.js";
import { logsCommand } from "./commands/logs.js";
import { queryCommand } from "./commands/query.js";
import { stateCommand } from "./commands/state.js";
import { validateCommand } from "./commands/validate.js";

const COMMANDS: Command[] = [validateCommand, ingestCommand, jobsCommand, queryCommand, logsCommand, fhirCommand, stateCommand, keysCommand, projectsCommand, loginCommand, logoutCommand];

function mainHelp(): string {
  const w = Math.max(...COMMANDS.map((c) => c.name.length));
  return `pss: the Patient State Service command-line tool

Usage: pss COMMAND [ARGS] [OPTIONS]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(w)}  ${c.summary}`).join("\n")}

${GLOBAL_HELP}

Run \`pss COMMAND --help\` for a command's arguments and examples.
Exit codes: 0 success, 1 failure (the error on stderr), 2 usage error,
3 an ingestion job completed with errors (ingest, jobs wait).

Example session:
  export PSS_URL=http://127.0.0.1:8080 PSS_API_KEY=...
  pss validate history.jsonl && pss ingest history.jsonl --yes
  pss query --type symptom_report --where 'payload.symptoms.0.score>3' --limit 10
`;
}

/** The message of a failure, with the located validation details the service sent. */
function describe(err: unknown): string {
  if (err instanceof PssError) {
    const lines = [`pss: ${err.message}${err.status_code ? ` (${err.status_code} ${err.error_type})` : ""}`];
    if (err instanceof ValidationError) for (const d of err.details.slice(0, 20)) lines.push(`  ${d.field ?? d.type}: ${d.message}`);
    return lines.join("\n");
  }
  return `pss: ${err instanceof Error ? err.message : String(err)}`;
}

/** Runs one command line; resolves to the exit code and never throws. */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    const cmd = COMMANDS.find((c) => c.name === rest[0]);
    (name === undefined ? io.err : io.out)(cmd ? `${cmd.help}\n\n${GLOBAL_HELP}\n` : mainHelp());
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    io.err(`pss: unknown command ${JSON.stringify(name)}; run pss --help\n`);
    return 2;
  }
  let values: Values = {};
  try {
    let parsed: { values: Values; positionals: string[] };
    try {
      parsed = parseArgs({ args: rest, options: { ...GLOBAL_OPTIONS, ...cmd.options }, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message, { cause: err });
    }
    values = parsed.values;
    const { positionals } = parsed;
    if (values.help) {
      io.out(`${cmd.help}\n\n${GLOBAL_HELP}\n`);
      return 0;
    }
    return await cmd.run({ values, args: positionals, io, url: serviceUrl(values, io.env), client: () => makeClient(values, io.env) });
  } catch (err) {
    io.err(`${describe(err)}\n`);
    if (err instanceof AuthenticationError && cmd !== loginCommand && !values["api-key"] && !io.env.PSS_API_KEY) {
      io.err("The stored login may have expired or its key been revoked: run pss login again.\n");
    }
    if (err instanceof UsageError) {
      io.err(`Run pss ${cmd.name} --help for usage.\n`);
      return 2;
    }
    return 1;
  }
}

function processIo(): Io {
  return {
    out: (s) => void process.stdout.write(s),
    err: (s) => void process.stderr.write(s),
    env: process.env,
    stdin: process.stdin,
    errIsTTY: process.stderr.isTTY === true,
  };
}
