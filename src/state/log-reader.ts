import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { readSubject } from "../../infra/nats/log-history.js";
import type { TopologyNames } from "../../infra/nats/topology.js";
import { traceText, type LogRecord, type Trace } from "../../readmodels/log-record.js";
import type { PatientLogMessage } from "../logs/log-writer.js";
import { AppError } from "../errors.js";
import { resolveLogType } from "../catalog/index.js";

export interface LogQuery {
  since?: string;
  until?: string;
  log_types?: string[];
  trace?: string;
  limit: number;
  cursor?: string;
  order: "asc" | "desc";
}

export interface LogRow {
  id: string;
  type: string;
  timestamp: string;
  ingested_at: string;
  payload: Record<string, unknown>;
  trace: Trace | null;
}

type Key = [timestamp: string, id: string];

const encodeCursor = (k: Key) => Buffer.from(JSON.stringify(k)).toString("base64url");

function decodeCursor(c: string): Key {
  try {
    const k = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
    if (Array.isArray(k) && typeof k[0] === "string" && typeof k[1] === "string") return [k[0], k[1]];
  } catch {
    // fall through
  }
  throw new AppError("validation", "cursor is not one this service gave out", [{ type: "value_error", message: "invalid cursor", field: "cursor", location: ["query", "cursor"], input_value: c }]);
}

const cmp = (a: Key, b: Key) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);

/**
 * A patient's logs straight from JetStream (its subject is its history), filtered and
 * paged by (timestamp, id) with an opaque cursor. Logs stored before the read are all
 * there: the write path answers only after JetStream stored them.
 */
export async function readPatientLogs(
  deps: { js: JetStreamClient; jsm: JetStreamManager; names: TopologyNames },
  scope: { organization_id: string; project_id: string },
  patientId: string,
  q: LogQuery,
): Promise<{ logs: LogRow[]; next_cursor: string | null }> {
  const types = q.log_types?.map((t) => resolveLogType(t) ?? t);
  const after = q.cursor ? decodeCursor(q.cursor) : undefined;
  const subject = deps.names.logSubject(scope.organization_id, scope.project_id, patientId);
  const rows: LogRecord[] = [];
  for await (const m of readSubject<PatientLogMessage>(deps.js, deps.jsm, deps.names.logsStream, subject)) {
    for (const l of m.data.logs) {
      if (q.since && l.timestamp < q.since) continue;
      if (q.until && l.timestamp > q.until) continue;
      if (types && !types.includes(l.log_type)) continue;
      if (q.trace !== undefined && traceText(l.trace) !== q.trace) continue;
      if (after) {
        const c = cmp([l.timestamp, l.id], after);
        if (q.order === "asc" ? c <= 0 : c >= 0) continue;
      }
      rows.push(l);
    }
  }
  rows.sort((a, b) => (q.order === "asc" ? 1 : -1) * cmp([a.timestamp, a.id], [b.timestamp, b.id]));
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    logs: page.map((l) => ({ id: l.id, type: l.log_type, timestamp: l.timestamp, ingested_at: l.ingested_at, payload: l.payload, trace: l.trace ?? null })),
    next_cursor: rows.length > q.limit && last ? encodeCursor([last.timestamp, last.id]) : null,
  };
}
