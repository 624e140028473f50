import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Integration tests share one NATS and one Redis; files run in parallel but each
    // uses its own stream names and key prefix (test/support/stack.ts).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest reads isolation per pool, not per project: the unit tier runs on the threads
    // pool, whose files share a worker's modules (no fresh module graph per file: most of
    // the tier's time), while int and e2e files each get a fresh process on the forks pool,
    // as they open connections and servers.
    poolOptions: { threads: { isolate: false } },
    // The tiers: `npx vitest run --project unit` (or int, e2e).
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], pool: "threads" } },
      { extends: true, test: { name: "int", include: ["test/int/**/*.test.ts"] } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"] } },
    ],
  },
});
