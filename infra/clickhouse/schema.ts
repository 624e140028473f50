import type { ClickHouseClient } from "@clickhouse/client";

/**
 * Versioned schema of the log store. Each migration runs once, in order, and is
 * recorded in `schema_migrations`; add a new entry to change the schema, never edit one.
 */
export const MIGRATIONS: { version: number; name: string; sql: (db: string) => string[] }[] = [
  {
    version: 1,
    name: "logs table",
    sql: (db) => [
      `CREATE TABLE IF NOT EXISTS ${db}.logs (
        organization_id LowCardinality(String),
        project_id LowCardinality(String),
        patient_id String,
        id String,
        type LowCardinality(String),
        timestamp DateTime64(3, 'UTC'),
        ingested_at DateTime64(3, 'UTC'),
        trace String,
        idempotency_key String,
        payload String,
        stream_seq UInt64
      )
      ENGINE = ReplacingMergeTree
      ORDER BY (organization_id, project_id, type, patient_id, timestamp, id)`,
    ],
  },
  {
    version: 2,
    name: "payload_json: the payload as the JSON type, for numeric path reads",
    // `payload` stays the exact text (answers keep key order, nulls and empty objects, which
    // the JSON type drops). The JSON copy is computed by ClickHouse on insert; a payload it
    // cannot hold (an integer beyond 64 bits, which simdjson refuses in JSONExtract too)
    // becomes an empty JSON rather than failing the whole insert. Parts written before this
    // version compute the column when read until MATERIALIZE COLUMN has rewritten them.
    sql: (db) => [
      `ALTER TABLE ${db}.logs ADD COLUMN IF NOT EXISTS payload_json JSON MATERIALIZED accurateCastOrDefault(payload, 'JSON') AFTER payload`,
      `ALTER TABLE ${db}.logs MATERIALIZE COLUMN payload_json`,
    ],
  },
  {
    version: 3,
    name: "payload_numbers: the JSON copy built from the payload's numbers only",
    // Parsing every payload into the JSON type cost ClickHouse 27-34 us per row. The
    // projector now also sends `payload_numbers`, the payload pruned to what numeric reads
    // use (query/numeric-copy.ts); it is EPHEMERAL (never stored, only an input
    // of the MATERIALIZED expression). A row inserted without it still gets the copy from
    // the whole payload, and parts written before keep theirs.
    sql: (db) => [
      `ALTER TABLE ${db}.logs ADD COLUMN IF NOT EXISTS payload_numbers String EPHEMERAL ''`,
      `ALTER TABLE ${db}.logs MODIFY COLUMN payload_json JSON MATERIALIZED accurateCastOrDefault(if(payload_numbers = '', payload, payload_numbers), 'JSON')`,
    ],
  },
  {
    version: 4,
    name: "trace_type: the type of a trace sent as {object_type, object_id}",
    // `trace` keeps the text filters compare (`type:id`, or a string trace as sent); queries
    // answer the trace as {object_type, object_id}, which that text cannot tell from a
    // string holding a colon. The projector now writes the object's type ('' for a string
    // trace). Rows inserted before this version get it from their text on read: the part
    // before the first colon when both sides are non-empty (the batch route refuses empty
    // parts), else ''. That reads a string trace with a colon in it, stored before this
    // version, as an object.
    sql: (db) => [
      `ALTER TABLE ${db}.logs ADD COLUMN IF NOT EXISTS trace_type LowCardinality(String) DEFAULT if(position(trace, ':') > 1 AND position(trace, ':') < length(trace), substring(trace, 1, position(trace, ':') - 1), '') AFTER trace`,
    ],
  },
];

/** A database name is an identifier we control (the namespace), never user text. */
export function assertIdentifier(db: string): string {
  if (!/^[a-z][a-z0-9_]{0,30}$/.test(db)) throw new Error(`invalid ClickHouse database name ${db}`);
  return db;
}

/** Creates the database and applies the migrations it has not seen; idempotent. */
export async function migrate(client: ClickHouseClient, db: string, migrations = MIGRATIONS): Promise<number[]> {
  assertIdentifier(db);
  await client.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` });
  await client.command({
    query: `CREATE TABLE IF NOT EXISTS ${db}.schema_migrations (version UInt32, name String, applied_at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY version`,
  });
  const r = await client.query({ query: `SELECT version FROM ${db}.schema_migrations`, format: "JSONEachRow" });
  const done = new Set((await r.json<{ version: number }>()).map((x) => Number(x.version)));
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    // The JSON type is generally available from ClickHouse 25.3; older servers need the flag.
    for (const q of m.sql(db)) await client.command({ query: q, clickhouse_settings: { allow_experimental_json_type: 1 } });
    await client.insert({ table: `${db}.schema_migrations`, values: [{ version: m.version, name: m.name, applied_at: Date.now() }], format: "JSONEachRow" });
    applied.push(m.version);
  }
  return applied;
}

/** Redis key of the stream sequence the ClickHouse projector has copied up to, for processes that do not run it. */
export const projectedSeqKey = (prefix: string): string => `${prefix}:projected`;

/** The highest stream sequence whose logs the copy in `db` holds (0: none): where a new projector owner reads on from. */
export async function copiedThrough(client: ClickHouseClient, db: string): Promise<number> {
  assertIdentifier(db);
  const r = await client.query({ query: `SELECT max(stream_seq) AS seq FROM ${db}.logs`, format: "JSONEachRow" });
  const rows = await r.json<{ seq: string | number }>();
  return Number(rows[0]?.seq ?? 0);
}
