#!/usr/bin/env node
// The CLI as compiled to dist/ (`npm install` builds it). A test under vitest spawns this
// file with vitest's environment (VITEST set): the TypeScript source runs then, through
// tsx, so the test exercises the code as it stands rather than the last build.
import { existsSync } from "node:fs";

const fromSource = process.env.VITEST !== undefined;
const entry = new URL(fromSource ? "../cli/main.ts" : "../dist/cli/main.js", import.meta.url);
if (fromSource) (await import("tsx/esm/api")).register();
else if (!existsSync(entry)) {
  console.error("pss: the CLI is not built; run `npm run build` in the package's folder");
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
