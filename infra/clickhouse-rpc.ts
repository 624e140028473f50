import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { ClickHouseClient } from "@clickhouse/client";

/**
 * Embedded ClickHouse lives in one process (its data directory takes one owner). Other
 * processes of the service reach it through NATS request-reply on these subjects.
 */
export const clickhouseRpcSubjects = (ns: string) => ({ ping: `${ns}.engine.clickhouse.ping` });

/** Answers pings for the processes that do not own the embedded engine. */
export function serveClickHouseRpc(nc: NatsConnection, ns: string, client: ClickHouseClient): Subscription {
  return nc.subscribe(clickhouseRpcSubjects(ns).ping, {
    queue: "clickhouse",
    callback: (_err, msg) => {
      client
        .ping()
        .then((r) => msg.respond(JSON.stringify(r.success ? { ok: true } : { ok: false, error: String(r.error) })))
        .catch((err) => msg.respond(JSON.stringify({ ok: false, error: String(err) })));
    },
  });
}

export async function pingClickHouseRpc(nc: NatsConnection, ns: string): Promise<void> {
  const r = await nc.request(clickhouseRpcSubjects(ns).ping, undefined, { timeout: 2_000 });
  const body = r.json<{ ok: boolean; error?: string }>();
  if (!body.ok) throw new Error(body.error ?? "ClickHouse is down");
}
