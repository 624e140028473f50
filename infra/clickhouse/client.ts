import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { createRequire } from "node:module";
import { Readable } from "node:stream";
import { createClient, type ClickHouseClient } from "@clickhouse/client";

const require = createRequire(import.meta.url);

export interface ClickHouseConfig {
  /** A ClickHouse server or cluster over HTTP; unset: embedded ClickHouse through chdb. */
  url?: string;
  /** Where embedded ClickHouse keeps its data. @default "./data" */
  dataDir: string;
}

/**
 * Inserts rows already encoded as JSONCompactEachRow lines (`table` and `columns` are
 * identifiers we control). Embedded ClickHouse takes the bytes as they are (chdb's raw
 * insert hands the Buffer to the engine without a copy); a server gets them as the
 * request body.
 */
export type InsertEncodedRows = (table: string, columns: readonly string[], rows: Buffer, settings: Record<string, string | number>) => Promise<void>;

/**
 * One `@clickhouse/client` for both modes: the embedded engine plugs in through
 * `chdb/connection`, so every query path is the same code against a real server.
 */
export function createClickHouse(cfg: ClickHouseConfig): { client: ClickHouseClient; embedded: boolean; insertRows: InsertEncodedRows } {
  if (cfg.url) {
    const client = createClient({ url: cfg.url });
    return {
      client,
      embedded: false,
      async insertRows(table, columns, rows, settings) {
        const r = await client.exec({ query: `INSERT INTO ${table} (${columns.join(", ")}) FORMAT JSONCompactEachRow`, values: Readable.from([rows]), clickhouse_settings: settings });
        r.stream.destroy();
      },
    };
  }
  const path = resolve(cfg.dataDir, "clickhouse");
  mkdirSync(path, { recursive: true });
  // chdb/connection ships as CommonJS only.
  const { createChdbConnection } = require("chdb/connection") as typeof import("chdb/connection");
  const connection = createChdbConnection({ path });
  return {
    client: createClient({ connection } as Parameters<typeof createClient>[0]),
    embedded: true,
    async insertRows(table, columns, rows, settings) {
      // Through the client, a body is turned into a string and appended to the statement:
      // two copies of every batch on the JavaScript heap, where they outlive several
      // young-generation collections while the insert runs.
      await connection.chdb.rawInsert({ table, columns, values: rows, format: "JSONCompactEachRow", settings });
    },
  };
}
