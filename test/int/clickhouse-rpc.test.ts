import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../infra/nats/connection.js";
import { clickhouseRpcSubjects, ClickHouseOwnerAbsentError, queryClickHouseRpc, serveClickHouseRpc } from "../../infra/clickhouse/rpc.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * Processes that do not own the embedded ClickHouse query it over NATS, whose messages
 * are at most 1 MB: a larger answer crosses in parts.
 */
let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

describe("the embedded ClickHouse over NATS", () => {
  it("answers a result of several megabytes whole, in parts, multibyte text intact", async () => {
    const server = await connectNats(t.config.natsUrl);
    const client = await connectNats(t.config.natsUrl);
    try {
      serveClickHouseRpc(server, t.config.namespace, t.services.clickhouse.client!);
      await server.flush();
      // Three rows of 1.2 MB of UTF-8 each: no part boundary may cut a character.
      const rows = await queryClickHouseRpc(client, t.config.namespace, { sql: "SELECT number AS n, repeat('é', 600000) AS s FROM numbers(3) ORDER BY n", params: {} }, 10_000);
      expect(rows.map((r) => r.n)).toEqual([0, 1, 2]);
      expect(rows.every((r) => r.s === "é".repeat(600_000))).toBe(true);
      // An asker that reads one message only is told the result is too large, as before parts.
      const old = await client.request(clickhouseRpcSubjects(t.config.namespace).query, JSON.stringify({ sql: "SELECT repeat('x', 700000) AS s", params: {} }), { timeout: 10_000 });
      expect(old.json()).toMatchObject({ ok: false, code: "RESULT_TOO_LARGE" });
      // Past 32 MB, no one gets it.
      await expect(queryClickHouseRpc(client, t.config.namespace, { sql: "SELECT repeat('x', 1000000) AS s FROM numbers(40)", params: {} }, 10_000)).rejects.toMatchObject({ code: "RESULT_TOO_LARGE" });
    } finally {
      await server.close();
      await client.close();
    }
  });

  it("says no process owns it when none serves the namespace", async () => {
    const client = await connectNats(t.config.natsUrl);
    try {
      await expect(queryClickHouseRpc(client, `${t.config.namespace}nobody`, { sql: "SELECT 1", params: {} }, 2_000)).rejects.toBeInstanceOf(ClickHouseOwnerAbsentError);
    } finally {
      await client.close();
    }
  });
});
