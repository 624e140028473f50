import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PatientStateClient } from "../../client/index.js";
import { startListening } from "./console.js";
import { run, type Run } from "./run.js";
import type { TestStack } from "./stack.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs the real `pss` binary against the stack, as the admin unless `env` says otherwise. */
export type Cli = (args: string[], o?: { env?: Record<string, string>; input?: string }) => Promise<Run>;

export interface CliStack {
  t: TestStack;
  base: string;
  /** The CLI's working folder; XDG_CONFIG_HOME is its `config` folder. */
  dir: string;
  pss: PatientStateClient;
  cli: Cli;
  close: () => Promise<void>;
}

/** A listening test stack, a scratch folder and a `pss` runner for the CLI's test files. */
export async function startCliStack(): Promise<CliStack> {
  const { t, base } = await startListening({ PSS_VIEW_DEBOUNCE_MS: "10" });
  const dir = mkdtempSync(join(tmpdir(), "pss-cli-"));
  const cli: Cli = (args, o = {}) => {
    const env = { ...process.env, PSS_URL: base, PSS_API_KEY: t.adminKey, PSS_PROJECT: "", XDG_CONFIG_HOME: join(dir, "config"), ...o.env };
    return run(process.execPath, [join(ROOT, "bin/pss.mjs"), ...args], { env, cwd: dir, ...(o.input !== undefined ? { input: o.input } : {}) });
  };
  return {
    t,
    base,
    dir,
    pss: new PatientStateClient({ baseUrl: base, apiKey: t.adminKey }),
    cli,
    close: async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
