/**
 * What the `payload_json` column needs of a payload (infra/clickhouse-schema.ts, migration
 * 3): the compiler reads only numbers from it (fields.ts `numeric` and `groupExpr`: the
 * Int64, UInt64, Float64, Bool and String variants of a key-only path, a string counting
 * when ClickHouse reads it as a number). Everything else (other strings, nulls, arrays,
 * empty objects) is read from the exact text, so the projector sends ClickHouse this
 * copy instead of letting it parse the whole payload into the JSON type, which was most of
 * a log's insert cost.
 *
 * A string is dropped only when it cannot read as a number: no digit, and no inf or nan
 * (which toFloat64OrNull accepts); the rest stay, and ClickHouse decides as before.
 * `{}` when nothing numeric is left (an empty JSON value, not "use the payload").
 */
const MAYBE_NUMBER = /[0-9]|inf|nan/i;

export function numericCopy(payload: Record<string, unknown>): Record<string, unknown> {
  return numbersOf(payload) ?? {};
}

function numbersOf(o: Record<string, unknown>): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const k in o) {
    const v = o[k];
    let keep: unknown;
    if (typeof v === "number" || typeof v === "boolean") keep = v;
    else if (typeof v === "string") keep = MAYBE_NUMBER.test(v) ? v : undefined;
    else if (v !== null && typeof v === "object" && !Array.isArray(v)) keep = numbersOf(v as Record<string, unknown>);
    if (keep !== undefined) (out ??= {})[k] = keep;
  }
  return out;
}
