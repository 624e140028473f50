import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Integration tests share one NATS and one Redis; files run in parallel but each
    // uses its own stream names and key prefix (see test/support/env.ts).
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
