import { traceParts, type LogRecord } from "../../readmodels/log-record.js";
import { cmpTime } from "../../readmodels/lib/time.js";
import type { ConversationsDoc } from "../../readmodels/modules/conversations/index.js";
import { autoTag } from "../../readmodels/modules/conversations/tags.js";

/** One memory as the memories read answers it. */
export interface MemoryRow {
  /** The id of the log it came from: a memory_report, or the conversation log it summarises. */
  memory_id: string;
  content: string;
  /**
   * origin (memory_report | conversation), type (the report's tag, else the service's),
   * type_source (client | auto), conversation_id (summaries), and when the log had them:
   * source (the report's payload source), trace (its parts), log_metadata (the envelope's metadata).
   */
  metadata: Record<string, unknown>;
  /** Event time of the log. */
  created_at: string;
  /** When the service accepted the log (the event time for a summary whose log is no longer read). */
  updated_at: string;
}

export interface MemoryQuery {
  /** Case-insensitive substring of the content; undefined or "" keeps every memory. */
  query?: string;
  /** Most memories answered. */
  limit: number;
}

/** What every memory's metadata says of its log, beside its own fields. */
function logMeta(l: LogRecord): Record<string, unknown> {
  return {
    ...(l.trace !== undefined ? { trace: traceParts(l.trace) } : {}),
    ...(l.metadata !== undefined ? { log_metadata: l.metadata } : {}),
  };
}

function fromReport(l: LogRecord): MemoryRow | undefined {
  const content = l.payload.content;
  if (typeof content !== "string") return undefined;
  // The same tag the conversations module gives it (its list keeps only the latest 200).
  const tag = typeof l.payload.type === "string" ? l.payload.type : undefined;
  const metadata = {
    origin: "memory_report",
    type: tag ?? autoTag(content),
    type_source: tag === undefined ? "auto" : "client",
    conversation_id: null,
    ...(l.payload.source !== undefined ? { source: l.payload.source } : {}),
    ...logMeta(l),
  };
  return { memory_id: l.id, content, metadata, created_at: l.timestamp, updated_at: l.ingested_at };
}

/**
 * A patient's memories, newest first (event time, then id): every memory_report log, and
 * the conversation summaries the compiled state keeps (its conversations module holds the
 * latest 200 memories; a summary has no log of its own). Each memory is listed once: a
 * report from its log, a summary from the state, both under the id of the log behind it.
 * `logs` is the patient's whole log, in any order.
 */
export async function collectMemories(logs: AsyncIterable<LogRecord>, conversations: ConversationsDoc | undefined, q: MemoryQuery): Promise<MemoryRow[]> {
  const rows: MemoryRow[] = [];
  const conversationLogs = new Map<string, LogRecord>();
  for await (const l of logs) {
    if (l.log_type === "memory_report") {
      const row = fromReport(l);
      if (row) rows.push(row);
    } else if (l.log_type === "conversation") conversationLogs.set(l.id, l);
  }
  for (const m of conversations?.memories ?? []) {
    if (m.origin !== "conversation") continue;
    const l = conversationLogs.get(m.log_id);
    rows.push({
      memory_id: m.log_id,
      content: m.content,
      metadata: { origin: "conversation", type: m.type, type_source: m.type_source, conversation_id: m.conversation_id, ...(l ? logMeta(l) : {}) },
      created_at: m.timestamp,
      updated_at: l?.ingested_at ?? m.timestamp,
    });
  }
  const needle = q.query?.toLowerCase();
  const kept = needle ? rows.filter((r) => r.content.toLowerCase().includes(needle)) : rows;
  kept.sort((a, b) => -cmpTime(a.created_at, b.created_at) || (a.memory_id < b.memory_id ? 1 : a.memory_id > b.memory_id ? -1 : 0));
  return kept.slice(0, Math.max(0, q.limit));
}
