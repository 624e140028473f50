import { AUDIT_COLUMNS, type CompiledQuery, type QueryShape } from "./types.js";

/**
 * Turns ClickHouse JSONEachRow rows into answer rows. Timestamps come back as
 * "YYYY-MM-DD hh:mm:ss.sss" (UTC) and leave as ISO 8601 with Z; 64-bit counts may come
 * quoted and leave as numbers; payload paths come as raw JSON text and leave parsed.
 */
export function shapeRows(q: CompiledQuery, raw: Record<string, unknown>[]): unknown[] {
  switch (q.kind) {
    case "count":
      return raw.map((r) => ({ count: toNumber(r.n) ?? 0 }));
    case "group":
      return raw.map((r) => groupRow(q.shape, r));
    case "rows": {
      const select = q.shape.select;
      return raw.map((r) => (select ? Object.fromEntries(select.map((s, i) => [s.key, selectedValue(s, r[`s${i}`])])) : logRow(r)));
    }
    default:
      return unreachable(q.kind);
  }
}

/** The page the answer carries: at most `q.limit` rows, and whether the SQL's extra row showed more. */
export function pageRows(q: CompiledQuery, raw: Record<string, unknown>[]): { rows: unknown[]; has_more: boolean } {
  if (q.kind === "count") return { rows: shapeRows(q, raw), has_more: false };
  return { rows: shapeRows(q, raw.slice(0, q.limit)), has_more: raw.length > q.limit };
}

/**
 * The patients whose data the page answered (the same rows `pageRows` keeps), for the
 * audit entry: each row's patient; each group's listed patients, with `omitted` counting
 * those a group made but did not list (a patient in several groups may be counted twice,
 * so it is an upper bound). A count names no patient.
 */
export function auditedPatients(q: CompiledQuery, raw: Record<string, unknown>[]): { ids: string[]; omitted: number } {
  if (q.kind === "count") return { ids: [], omitted: 0 };
  const page = raw.slice(0, q.limit);
  if (q.kind === "rows") return { ids: [...new Set(page.map((r) => r[AUDIT_COLUMNS.patient]).filter((v): v is string => typeof v === "string"))], omitted: 0 };
  const ids = new Set<string>();
  let omitted = 0;
  for (const r of page) {
    const listed = Array.isArray(r[AUDIT_COLUMNS.patients]) ? (r[AUDIT_COLUMNS.patients] as unknown[]).filter((v): v is string => typeof v === "string") : [];
    for (const id of listed) ids.add(id);
    omitted += Math.max(0, (toNumber(r[AUDIT_COLUMNS.patientCount]) ?? 0) - listed.length);
  }
  return { ids: [...ids], omitted };
}

/** The number in a count query's single row (`countSql`, or the count terminal). */
export function countOf(raw: Record<string, unknown>[]): number {
  return toNumber(raw[0]?.n) ?? 0;
}

function logRow(r: Record<string, unknown>): Record<string, unknown> {
  return { id: r.id, type: r.type, timestamp: toIso(r.timestamp), ingested_at: toIso(r.ingested_at), trace: traceObject(r.trace_type, r.trace), payload: fieldValue("payload", r.payload) };
}

/**
 * A trace as GET /v1/state/{pid}/logs answers it, from the `trace` text (`type:id` for an
 * object, the string itself for a string trace, '' for none) and `trace_type` (the
 * object's type, '' for a string trace): `{object_type, object_id}`, object_type null for
 * a string trace; null for none.
 */
function traceObject(type: unknown, text: unknown): { object_type: string | null; object_id: string } | null {
  if (typeof text !== "string" || text === "") return null;
  if (typeof type === "string" && type !== "" && text.startsWith(`${type}:`)) return { object_type: type, object_id: text.slice(type.length + 1) };
  return { object_type: null, object_id: text };
}

/** A selected column: an array select's raw JSON (one text, or a list of them), the trace's [type, text], or a field. */
function selectedValue(s: { path: string; array?: "first" | "list" }, v: unknown): unknown {
  if (s.array === "list") return Array.isArray(v) ? v.map((x) => fieldValue(s.path, x)) : [];
  if (s.array === "first") return fieldValue(s.path, v);
  if (s.path === "trace" && Array.isArray(v)) return traceObject(v[0], v[1]);
  return fieldValue(s.path, v);
}

function groupRow(shape: QueryShape, r: Record<string, unknown>): Record<string, unknown> {
  const keys = shape.groupKeys ?? [];
  const out: Record<string, unknown> = {};
  // With select, only the selected group keys, under their keys; else every group key.
  const wanted = shape.select ?? keys.map((k) => ({ key: k, path: k }));
  for (const s of wanted) out[s.key] = fieldValue(s.path, r[`g${keys.indexOf(s.path)}`]);
  (shape.aggregations ?? []).forEach((a, i) => {
    const v = r[`a${i}`];
    out[a.alias] = a.field === "timestamp" ? toIso(v) : a.field !== undefined && (a.op === "min" || a.op === "max") ? jsonText(v) : toNumber(v);
  });
  return out;
}

/** A column value by the field it came from (the path text as the body wrote it). */
function fieldValue(path: string, v: unknown): unknown {
  if (path === "timestamp") return toIso(v);
  if (path === "trace") return v === "" || v === undefined ? null : v; // a group key: the trace text, '' is "no trace"
  if (path === "type") return v;
  // payload or payload.<path>: JSON text; '' is a path the log lacks.
  if (typeof v !== "string") return v ?? null;
  if (v === "") return null;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** A value the SQL wrote as JSON text (min and max of a payload path: a number, a string or null). */
function jsonText(v: unknown): unknown {
  if (typeof v !== "string") return v ?? null;
  try {
    return JSON.parse(v);
  } catch {
    return null;
  }
}

/** ClickHouse DateTime64 text (UTC, no zone) → canonical ISO 8601 "…sssZ". */
function toIso(v: unknown): unknown {
  if (typeof v !== "string") return v ?? null;
  const s = v.includes("T") ? v : v.replace(" ", "T");
  const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(s) ? s : `${s}Z`);
  return Number.isNaN(ms) ? v : new Date(ms).toISOString();
}

/** Counts arrive as numbers or quoted 64-bit strings; avg over nothing is null or NaN → null. */
function toNumber(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : null;
}

function unreachable(x: never): never {
  throw new Error(`unhandled query kind ${String(x)}`);
}
