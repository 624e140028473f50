/**
 * What the `payload_json` column needs of a payload (infra/clickhouse/schema.ts, migration
 * 3): the compiler reads only numbers from it (fields.ts `numeric` and `groupExpr`: the
 * Int64, UInt64, Float64, Bool and String variants of a key-only path, a string counting
 * when ClickHouse reads it as a number). Everything else (other strings, nulls, arrays,
 * empty objects) is read from the exact text, so the projector sends ClickHouse this
 * copy instead of letting it parse the whole payload into the JSON type, which was most of
 * a log's insert cost.
 *
 * A string stays only when it may read as a number: it spells one (an optional sign,
 * digits and dots, an optional exponent) or it mentions inf or nan, which toFloat64OrNull
 * also accepts. That is looser than ClickHouse's own parse (an integration test checks
 * that every string ClickHouse reads as a number is kept), and it drops the dates and
 * times most payloads carry ("2026-05-01T08:00:00Z", "08:00"), codes ("2345-7") and ids,
 * which read as NULL either way: typing them into the JSON column was a fifth of an
 * insert's cost. `{}` when nothing numeric is left (an empty JSON value, not "use the
 * payload").
 */
const SPELLS_NUMBER = /^[+-]?[0-9.]*(?:[eE][+-]?[0-9]*)?$/;
const DIGIT = /[0-9]/;
const INF_OR_NAN = /inf|nan/i;

/** Whether ClickHouse's toFloat64OrNull may read `s` as a number (never false when it does). */
export function mayReadAsNumber(s: string): boolean {
  return (SPELLS_NUMBER.test(s) && DIGIT.test(s)) || INF_OR_NAN.test(s);
}

export function numericCopy(payload: Record<string, unknown>): Record<string, unknown> {
  return numbersOf(payload) ?? {};
}

function numbersOf(o: Record<string, unknown>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const k in o) {
    const v = o[k];
    let keep: unknown;
    if (typeof v === "number" || typeof v === "boolean") keep = v;
    else if (typeof v === "string") keep = mayReadAsNumber(v) ? v : undefined;
    else if (v !== null && typeof v === "object" && !Array.isArray(v)) keep = numbersOf(v as Record<string, unknown>);
    if (keep !== undefined) (out ??= {})[k] = keep;
  }
  return out;
}
