import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { TopologyNames } from "../../infra/nats/topology.js";
import { traceParts, traceText, type LogRecord } from "../../readmodels/log-record.js";
import { PatientLog } from "../logs/patient-log.js";
import { AppError, fieldIssue } from "../errors.js";
import { resolveLogType } from "../../catalog/index.js";

export interface LogQuery {
  since?: string;
  until?: string;
  log_types?: string[];
  trace?: string;
  /** Only logs whose trace has this object_type (traceParts): an object trace's; a string trace has none. */
  trace_type?: string;
  /** Only logs whose trace has this object_id (traceParts): an object trace's, or a string trace whole. */
  trace_id?: string;
  /** Only these logs (a view's sources, a change's logs), each still within the other filters. */
  log_ids?: readonly string[];
  limit: number;
  cursor?: string;
  order: "asc" | "desc";
  /** Each row carries the log's metadata (a FHIR-made log's whole source resource, say). */
  include_metadata?: boolean;
}

export interface LogRow {
  id: string;
  type: string;
  timestamp: string;
  ingested_at: string;
  payload: Record<string, unknown>;
  /** Always an object (a string trace as its traceParts: object_type null), or null. */
  trace: { object_type: string | null; object_id: string } | null;
  /** Only when asked for (include_metadata): the log's metadata as sent, or null. */
  metadata?: Record<string, unknown> | null;
}

type LogDeps = { js: JetStreamClient; jsm: JetStreamManager; names: TopologyNames };

/**
 * Every log of a patient straight from JetStream (its subject is its history), in
 * acceptance order. Logs stored before the call are all there: the write path answers
 * only after JetStream stored them. A message the service did not write is skipped.
 */
export async function* patientLogs(deps: LogDeps, scope: { organization_id: string; project_id: string }, patientId: string): AsyncGenerator<LogRecord> {
  const owner = { organization_id: scope.organization_id, project_id: scope.project_id, patient_id: patientId };
  yield* new PatientLog(deps).logs(owner);
}

/** Whether a log's trace has the parts asked for (each filter optional; a log without a trace matches none). */
export function traceMatches(l: LogRecord, q: { trace?: string; trace_type?: string; trace_id?: string }): boolean {
  if (q.trace !== undefined && traceText(l.trace) !== q.trace) return false;
  if (q.trace_type === undefined && q.trace_id === undefined) return true;
  if (l.trace === undefined) return false;
  const parts = traceParts(l.trace);
  return (q.trace_type === undefined || parts.object_type === q.trace_type) && (q.trace_id === undefined || parts.object_id === q.trace_id);
}

type Key = [timestamp: string, id: string];

const encodeCursor = (k: Key) => Buffer.from(JSON.stringify(k)).toString("base64url");

function decodeCursor(c: string): Key {
  try {
    const k: unknown = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
    const [timestamp, id] = Array.isArray(k) ? (k as unknown[]) : [];
    if (typeof timestamp === "string" && typeof id === "string") return [timestamp, id];
  } catch {
    // fall through
  }
  throw new AppError("validation", "cursor is not one this service gave out", [{ type: "value_error", message: "invalid cursor", field: "cursor", location: ["query", "cursor"], input_value: c }]);
}

const cmp = (a: Key, b: Key) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);

/** The ids of a patient's logs that `keep` keeps. */
export async function logIdsWhere(deps: LogDeps, scope: { organization_id: string; project_id: string }, patientId: string, keep: (l: LogRecord) => boolean): Promise<Set<string>> {
  const ids = new Set<string>();
  for await (const l of patientLogs(deps, scope, patientId)) if (keep(l)) ids.add(l.id);
  return ids;
}

/** A patient's logs (patientLogs), filtered and paged by (timestamp, id) with an opaque cursor. */
export async function readPatientLogs(
  deps: LogDeps,
  scope: { organization_id: string; project_id: string },
  patientId: string,
  q: LogQuery,
): Promise<{ logs: LogRow[]; next_cursor: string | null }> {
  if (q.since !== undefined && q.until !== undefined && q.since > q.until) {
    // As /changes and /diff answer it: an empty page would hide the swapped bounds.
    const message = `since ${q.since} is after until ${q.until}: since is the start of the window; swap them`;
    throw new AppError("validation", message, [fieldIssue(["query", "since"], message, q.since)]);
  }
  const types = q.log_types?.map((t) => resolveLogType(t) ?? t);
  const after = q.cursor ? decodeCursor(q.cursor) : undefined;
  const ids = q.log_ids && new Set(q.log_ids);
  // Only the page and the row after it are kept: a patient's history can be years of
  // device readings, and a page must not hold all of them in memory to sort them.
  const order = (a: LogRecord, b: LogRecord) => (q.order === "asc" ? 1 : -1) * cmp([a.timestamp, a.id], [b.timestamp, b.id]);
  const keep = q.limit + 1;
  let rows: LogRecord[] = [];
  let matched = 0;
  for await (const l of patientLogs(deps, scope, patientId)) {
    if (q.since && l.timestamp < q.since) continue;
    if (q.until && l.timestamp > q.until) continue;
    if (types && !types.includes(l.log_type)) continue;
    if (!traceMatches(l, q)) continue;
    if (ids && !ids.has(l.id)) continue;
    if (after) {
      const c = cmp([l.timestamp, l.id], after);
      if (q.order === "asc" ? c <= 0 : c >= 0) continue;
    }
    matched++;
    rows.push(l);
    if (rows.length >= keep * 4) rows = rows.sort(order).slice(0, keep);
  }
  rows.sort(order);
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    logs: page.map((l) => ({
      id: l.id, type: l.log_type, timestamp: l.timestamp, ingested_at: l.ingested_at, payload: l.payload, trace: l.trace === undefined ? null : traceParts(l.trace),
      ...(q.include_metadata ? { metadata: l.metadata ?? null } : {}),
    })),
    next_cursor: matched > q.limit && last ? encodeCursor([last.timestamp, last.id]) : null,
  };
}
