#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx pss` works in the repository without a build.
import { register } from "tsx/esm/api";

register();
const { main } = await import(new URL("../cli/main.ts", import.meta.url).href);
process.exitCode = await main(process.argv.slice(2));
