import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { createRequire } from "node:module";
import { createClient, type ClickHouseClient } from "@clickhouse/client";

const require = createRequire(import.meta.url);

export interface ClickHouseConfig {
  /** A ClickHouse server or cluster over HTTP; unset: embedded ClickHouse through chdb. */
  url?: string;
  /** Where embedded ClickHouse keeps its data. @default "./data" */
  dataDir: string;
}

/**
 * One `@clickhouse/client` for both modes: the embedded engine plugs in through
 * `chdb/connection`, so every query path is the same code against a real server.
 */
export function createClickHouse(cfg: ClickHouseConfig): { client: ClickHouseClient; embedded: boolean } {
  if (cfg.url) return { client: createClient({ url: cfg.url }), embedded: false };
  const path = resolve(cfg.dataDir, "clickhouse");
  mkdirSync(path, { recursive: true });
  // chdb/connection ships as CommonJS only.
  const { createChdbConnection } = require("chdb/connection") as typeof import("chdb/connection");
  const connection = createChdbConnection({ path });
  return { client: createClient({ connection } as Parameters<typeof createClient>[0]), embedded: true };
}
