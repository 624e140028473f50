import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The folders are the layers, and dependencies point one way (README, "Code layout").
 * Each layer may import the layers listed for it and itself, nothing else; type-only
 * imports count too. Entry points and tests (bench/, bin/, infra/scripts/, test/) may
 * import anything.
 */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  catalog: [],
  readmodels: ["catalog"],
  query: ["catalog"],
  fhir: ["catalog", "readmodels"],
  infra: ["catalog", "readmodels", "query", "fhir"],
  src: ["catalog", "readmodels", "query", "fhir", "infra"],
  actors: ["catalog", "readmodels", "query", "fhir", "infra", "src"],
  app: ["catalog", "readmodels", "query", "fhir", "infra", "src", "actors"],
  // The client and the CLI reach the server only through what it publishes: the catalog
  // (log types, module keys, payload schemas) and the wire shapes of its routes.
  client: ["catalog"],
  cli: ["client", "catalog"],
  // The web console is a browser client: the wire shapes' types, nothing of the server.
  console: ["client"],
};

/** Imports against the layers, each kept on purpose, with the reason. */
const EXCEPTIONS: Readonly<Record<string, string>> = {
  "app/http/routes/console.ts -> .": "the repository's root, to find the built console under dist/: a folder, not code",
  "console/vite.config.ts -> dist/console": "where Vite writes the built console: a folder, not code",
  "cli/commands/validate.ts -> src/ingestion/validate-file.js": "pss validate runs the service's own file rules offline, the very code a job's VALIDATING stage runs",
};

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "../.."));
const ENTRY_POINTS = ["infra/scripts/"];

/** The layer a repository path belongs to, or null for entry points, tests and files outside the layers. */
export function layerOf(path: string): string | null {
  if (ENTRY_POINTS.some((p) => path.startsWith(p))) return null;
  const top = path.split("/")[0]!;
  return Object.hasOwn(ALLOWED, top) ? top : null;
}

const IMPORT = /(?:^|\s)(?:import|export)\s[^;]*?from\s*["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)|new URL\(\s*["'](\.{1,2}\/[^"']+)["']/g;

/** Every relative import of a file, as repository paths. */
export function importsOf(path: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec) out.push(normalize(join(dirname(path), spec)));
  }
  return out;
}

/** Each import that goes against the layers: "from -> to". */
export function backwardsImports(files: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  for (const [path, text] of files) {
    const from = layerOf(path);
    if (from === null) continue;
    for (const target of importsOf(path, text)) {
      const to = layerOf(target);
      if (to === null) {
        const excepted = Object.hasOwn(EXCEPTIONS, `${path} -> ${target}`);
        if (!excepted && !ENTRY_POINTS.some((p) => target.startsWith(p)) && target.split("/")[0] !== from) out.push(`${path} -> ${target} (outside the layers)`);
        continue;
      }
      if (to !== from && !ALLOWED[from]!.includes(to) && !Object.hasOwn(EXCEPTIONS, `${path} -> ${target}`)) out.push(`${path} -> ${target} (${from} may not import ${to})`);
    }
  }
  return out;
}

function sources(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      const rel = `${dir}/${name}`;
      if (statSync(join(ROOT, rel)).isDirectory()) walk(rel);
      else if (/\.(ts|mjs)$/.test(name)) files.set(rel, readFileSync(join(ROOT, rel), "utf8"));
    }
  };
  for (const layer of Object.keys(ALLOWED)) walk(layer);
  return files;
}

describe("architecture", () => {
  it("has every import of every layer point down the layers", () => {
    expect(backwardsImports(sources())).toEqual([]);
  });

  it("reports a backwards import, a type-only one too", () => {
    const files = new Map([
      ["readmodels/views/x.ts", 'import { AppError } from "../../src/errors.js";'],
      ["catalog/y.ts", 'import type { Redis } from "../infra/redis/connection.js";'],
      ["src/ok.ts", 'import { LOG_TYPES } from "../catalog/index.js";\nimport type { LogRecord } from "../readmodels/log-record.js";'],
      ["client/z.ts", 'export { thing } from "../app/http/schemas.js";'],
      ["cli/commands/validate.ts", 'const { validateJsonlFile } = await import("../../src/ingestion/validate-file.js");'],
    ]);
    expect(backwardsImports(files)).toEqual([
      "readmodels/views/x.ts -> src/errors.js (readmodels may not import src)",
      "catalog/y.ts -> infra/redis/connection.js (catalog may not import infra)",
      "client/z.ts -> app/http/schemas.js (client may not import app)",
    ]);
  });

  it("knows each file of the repository's layers", () => {
    const files = sources();
    for (const layer of Object.keys(ALLOWED)) expect([...files.keys()].some((f) => layerOf(f) === layer), layer).toBe(true);
    expect(relative(ROOT, join(ROOT, "catalog"))).toBe("catalog");
  });
});
