import { createRequire } from "node:module";
import { afterAll } from "vitest";

/**
 * Runs after every int and e2e file (vitest.config.ts `setupFiles`). Their files share a
 * worker process one after another, and chdb binds one data directory per process: a file
 * that fails without closing its stack (a test timed out mid-restart) would otherwise leave
 * its embedded ClickHouse open, and every later file in the worker would fail to open its
 * own, burying the one real failure under many. chdb's own exit hook closes the same way.
 */
const chdb = createRequire(import.meta.url)("chdb") as { _closeAllSessions(): void; drainPending(): Promise<void> };

afterAll(async () => {
  chdb._closeAllSessions();
  await chdb.drainPending();
});
