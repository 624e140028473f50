import { headers, NoRespondersError, RequestError, TimeoutError, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { ClickHouseClient } from "@clickhouse/client";

/**
 * Embedded ClickHouse lives in one process (its data directory takes one owner). Other
 * processes of the service reach it through NATS request-reply on these subjects.
 */
export const clickhouseRpcSubjects = (ns: string) => ({ ping: `${ns}.engine.clickhouse.ping`, query: `${ns}.engine.clickhouse.query` });

/**
 * A NATS message is at most the server's max_payload (1 MB by default), so an answer
 * past a part's size crosses as several messages, in order, on the asker's inbox.
 */
const PART_BYTES = 512 * 1024;
/** Largest answer sent at all, in bytes of JSON: 1,000 rows of 32 KB; past it, a clear error. */
const MAX_REPLY_BYTES = 32 * 1024 * 1024;
/** On a request: the asker reads an answer in parts. On each part: `i/n`. */
const PARTS_HEADER = "Pss-Parts";

export interface QueryRequest {
  sql: string;
  params: Record<string, unknown>;
  settings?: Record<string, string | number>;
  /** A statement without rows to answer (a DELETE): sent as a command, answered with none. */
  command?: boolean;
}

/** A ClickHouse error as it crosses processes: its code decides the HTTP answer. */
export class ClickHouseQueryError extends Error {
  override name = "ClickHouseQueryError";
  constructor(message: string, readonly code?: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * No process answers for embedded ClickHouse: its owner (the worker) is starting or being
 * restarted. Nothing was run, so the request may be sent again.
 */
export class ClickHouseOwnerAbsentError extends Error {
  override name = "ClickHouseOwnerAbsentError";
  constructor(options?: { cause?: unknown }) {
    super("no process of this namespace owns the embedded ClickHouse yet (its worker is starting)", options);
  }
}

export const isClickHouseOwnerAbsent = (err: unknown): err is ClickHouseOwnerAbsentError => err instanceof ClickHouseOwnerAbsentError;

/** nc.request, with "nobody subscribes" told apart from other failures. */
async function request(nc: NatsConnection, subject: string, data: string | undefined, timeoutMs: number) {
  try {
    return await nc.request(subject, data, { timeout: timeoutMs });
  } catch (err) {
    if (err instanceof RequestError && err.isNoResponders()) throw new ClickHouseOwnerAbsentError({ cause: err });
    throw err;
  }
}

/**
 * A request whose answer may come in parts (each `i/n` in PARTS_HEADER; an answer without
 * it is whole), joined. Its own inbox keeps the parts in the order they were sent.
 */
async function requestParts(nc: NatsConnection, subject: string, data: string, timeoutMs: number): Promise<string> {
  const h = headers();
  h.set(PARTS_HEADER, "1");
  const parts: Uint8Array[] = [];
  let count = 1;
  try {
    const replies = await nc.requestMany(subject, data, { strategy: "timer", maxWait: timeoutMs, noMux: true, headers: h });
    for await (const m of replies) {
      parts.push(m.data);
      count = Number(m.headers?.get(PARTS_HEADER).split("/")[1] || 1);
      if (parts.length >= count) break;
    }
  } catch (err) {
    if (err instanceof NoRespondersError || (err instanceof RequestError && err.isNoResponders())) throw new ClickHouseOwnerAbsentError({ cause: err });
    throw err;
  }
  if (parts.length < count || parts.length === 0) throw new TimeoutError();
  return Buffer.concat(parts).toString("utf8");
}

export async function runQuery(client: ClickHouseClient, q: QueryRequest): Promise<Record<string, unknown>[]> {
  try {
    if (q.command) {
      await client.command({ query: q.sql, query_params: q.params, clickhouse_settings: q.settings });
      return [];
    }
    const r = await client.query({ query: q.sql, query_params: q.params, format: "JSONEachRow", clickhouse_settings: q.settings });
    return await r.json<Record<string, unknown>>();
  } catch (err) {
    const e = err as { message?: string; code?: string };
    throw new ClickHouseQueryError(e.message ?? String(err), e.code, { cause: err });
  }
}

/** Answers pings and queries for the processes that do not own the embedded engine. */
export function serveClickHouseRpc(nc: NatsConnection, ns: string, client: ClickHouseClient): Subscription[] {
  const subjects = clickhouseRpcSubjects(ns);
  const ping = nc.subscribe(subjects.ping, {
    queue: "clickhouse",
    callback: (_err, msg) => {
      client
        .ping()
        .then((r) => msg.respond(JSON.stringify(r.success ? { ok: true } : { ok: false, error: String(r.error) })))
        .catch((err) => msg.respond(JSON.stringify({ ok: false, error: String(err) })));
    },
  });
  const query = nc.subscribe(subjects.query, {
    queue: "clickhouse",
    callback: (_err, msg) => {
      // Parsed inside the promise: a throw in a subscription callback ends the connection's
      // reader, so one message that is not JSON would silence this process's NATS for good.
      Promise.resolve()
        .then(() => runQuery(client, msg.json<QueryRequest>()))
        .then((rows) => answer(nc, msg, Buffer.from(JSON.stringify({ ok: true, rows }))))
        .catch((err: ClickHouseQueryError) => msg.respond(JSON.stringify({ ok: false, error: err.message, code: err.code })));
    },
  });
  return [ping, query];
}

const TOO_LARGE = JSON.stringify({ ok: false, error: "result too large: lower the limit or select fewer fields", code: "RESULT_TOO_LARGE" });

/** Sends `body` to the asker: whole when it fits one part, else in parts when the asker reads them. */
function answer(nc: NatsConnection, msg: Msg, body: Buffer): void {
  if (body.length <= PART_BYTES) return void msg.respond(body);
  if (body.length > MAX_REPLY_BYTES || !msg.headers?.has(PARTS_HEADER) || !msg.reply) return void msg.respond(TOO_LARGE);
  const count = Math.ceil(body.length / PART_BYTES);
  for (let i = 0; i < count; i++) {
    const h = headers();
    h.set(PARTS_HEADER, `${i + 1}/${count}`);
    nc.publish(msg.reply, body.subarray(i * PART_BYTES, (i + 1) * PART_BYTES), { headers: h });
  }
}

export async function pingClickHouseRpc(nc: NatsConnection, ns: string): Promise<void> {
  const r = await request(nc, clickhouseRpcSubjects(ns).ping, undefined, 2_000);
  const body = r.json<{ ok: boolean; error?: string }>();
  if (!body.ok) throw new Error(body.error ?? "ClickHouse is down");
}

export async function queryClickHouseRpc(nc: NatsConnection, ns: string, q: QueryRequest, timeoutMs: number): Promise<Record<string, unknown>[]> {
  const text = await requestParts(nc, clickhouseRpcSubjects(ns).query, JSON.stringify(q), timeoutMs);
  const body = JSON.parse(text) as { ok: true; rows: Record<string, unknown>[] } | { ok: false; error?: string; code?: string };
  if (!body.ok) throw new ClickHouseQueryError(body.error ?? "query failed", body.code);
  return body.rows;
}
