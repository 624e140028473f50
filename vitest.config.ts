import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Integration tests share one NATS and one Redis; files run in parallel but each
    // uses its own stream names and key prefix (test/support/stack.ts).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // No fresh module graph per file: a worker imports the app (and loads chdb) once and
    // runs file after file, where a fresh process per int or e2e file spent more time
    // loading than most files spend testing. Files still share nothing they do not
    // close: each stack has its own namespace and data directory (test/support/stack.ts).
    // Vitest reads isolation per pool, not per project: the unit tier is on the threads
    // pool, the int and e2e tiers on forks, as they open connections, servers and processes.
    poolOptions: { threads: { isolate: false }, forks: { isolate: false } },
    // The tiers: `npx vitest run --project unit` (or int, e2e).
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], pool: "threads" } },
      { extends: true, test: { name: "int", include: ["test/int/**/*.test.ts"], setupFiles: ["test/support/file-teardown.ts"] } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], setupFiles: ["test/support/file-teardown.ts"] } },
    ],
  },
});
