import type { PatientStateStore, StateEvent } from "../../infra/redis/state-store.js";
import { compareLogs } from "../../readmodels/order.js";
import { AppError } from "../errors.js";

/**
 * The audit rows each `status` filter keeps. complete: every row, since a row is written
 * once its log is applied, whether that changed the state (applied) or not (no_change).
 * pending and failed keep none: a read waits until every accepted log is applied
 * (read-your-writes), and a log is validated before it is accepted, so applying it cannot fail.
 */
export const EVENT_STATUS_FILTERS = {
  complete: ["applied", "no_change"],
  pending: [],
  failed: [],
  applied: ["applied"],
  no_change: ["no_change"],
} as const satisfies Record<string, readonly StateEvent["status"][]>;

export type EventStatusFilter = keyof typeof EVENT_STATUS_FILTERS;

export interface EventFilters {
  /** Canonical log types. */
  log_types?: readonly string[];
  status?: EventStatusFilter;
  /** Only rows of these logs (those carrying a trace asked for). */
  log_ids?: ReadonlySet<string>;
}

/** The rows the filters keep, or undefined when they keep every row (complete keeps all: the page reads as unfiltered). */
export function eventMatcher(f: EventFilters): ((e: StateEvent) => boolean) | undefined {
  const statuses: readonly string[] | undefined = f.status === undefined || f.status === "complete" ? undefined : EVENT_STATUS_FILTERS[f.status];
  const { log_types: types, log_ids: ids } = f;
  if (!types && !statuses && !ids) return undefined;
  return (e) => (!types || types.includes(e.log_type)) && (!statuses || statuses.includes(e.status)) && (!ids || ids.has(e.source_event_log_id));
}

/** Where a page of the audit ended: the row's number then, and its place in fold order. */
interface EventsCursor {
  score: number;
  timestamp: string;
  id: string;
}

export interface EventsPageQuery {
  /** ISO 8601 bounds on triggered_at (when the log was accepted), compared as UTC text. */
  since?: string;
  until?: string;
  limit: number;
  cursor?: string;
  /** Only rows it keeps (log type, status, trace): applied like since/until, after paging by number. */
  match?: (e: StateEvent) => boolean;
}

export interface EventsPage {
  rows: { score: number; event: StateEvent }[];
  /** Whether rows past the page pass the filters. */
  more: boolean;
}

/**
 * An opaque cursor after `row`. It carries the row's place in fold order (log timestamp,
 * then log id), not only its number: a late log makes the engine rebuild the patient and
 * renumber the audit, and a cursor that were a row number would then repeat rows or skip
 * the late one.
 */
export function eventsCursorAfter(row: { score: number; event: StateEvent }): string {
  return Buffer.from(JSON.stringify([row.score, row.event.log_timestamp, row.event.source_event_log_id])).toString("base64url");
}

function decode(c: string, location: (string | number)[]): EventsCursor {
  // A bare row number: the cursors this service gave out before.
  if (/^\d+$/.test(c)) return { score: Number(c), timestamp: "", id: "" };
  try {
    const k: unknown = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
    const [score, timestamp, id] = Array.isArray(k) ? (k as unknown[]) : [];
    if (typeof score === "number" && Number.isSafeInteger(score) && typeof timestamp === "string" && typeof id === "string") return { score, timestamp, id };
  } catch {
    // fall through
  }
  throw new AppError("validation", "cursor is not one this service gave out", [{ type: "value_error", message: "invalid cursor", field: "cursor", location, input_value: c }]);
}

/** Rows read at a time where most may be skipped (the audit keeps 1,000 per patient). */
const SEEK_ROWS = 500;

/** A bound as UTC text, as triggered_at is stored; text Date cannot read stays as sent. */
function utcText(iso: string): string {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : new Date(ms).toISOString();
}

/** A cursor is a JSON array in base64url, or a bare row number (older cursors). */
export const EVENTS_CURSOR_PATTERN = "^[A-Za-z0-9_-]+$";

/**
 * One page of a patient's audit, oldest first. The audit is stored in fold order
 * (incremental saves append in it, a rebuild rewrites it whole), so a cursor resumes
 * right after its row when that row still has its number, and else at the first row
 * that sorts after it.
 */
export async function readEventsPage(store: PatientStateStore, patientId: string, q: EventsPageQuery, location: (string | number)[]): Promise<EventsPage> {
  const rows: EventsPage["rows"] = [];
  // triggered_at is stored as UTC text: bounds given with an offset compare after the same conversion.
  const since = q.since === undefined ? undefined : utcText(q.since);
  const until = q.until === undefined ? undefined : utcText(q.until);
  let after = 0;
  let skipThrough: EventsCursor | null = null;
  if (q.cursor) {
    const c = decode(q.cursor, location);
    after = c.score;
    if (c.id !== "") {
      const [at] = await store.events(patientId, c.score - 1, 1);
      if (!at || at.score !== c.score || at.event.source_event_log_id !== c.id) {
        // Renumbered since: find the place from the start.
        after = 0;
        skipThrough = c;
      }
    }
  }
  // Filters apply after paging by number, so read until the page is full.
  for (;;) {
    // Rows that will be skipped (looking for a renumbered cursor's place, or filtered out)
    // are read in large reads, not a page at a time.
    const want = skipThrough || since || until || q.match ? Math.max(q.limit + 1, SEEK_ROWS) : q.limit + 1;
    const batch = await store.events(patientId, after, want);
    for (const r of batch) {
      after = r.score;
      if (skipThrough) {
        if (compareLogs({ timestamp: r.event.log_timestamp ?? "", id: r.event.source_event_log_id }, skipThrough) <= 0) continue;
        skipThrough = null;
      }
      if (since && r.event.triggered_at < since) continue;
      if (until && r.event.triggered_at > until) continue;
      if (q.match && !q.match(r.event)) continue;
      if (rows.length === q.limit) return { rows, more: true };
      rows.push(r);
    }
    if (batch.length < want) return { rows, more: false };
  }
}
