import type { PatientState } from "../../readmodels/patient-state.js";
import { allRecentEntries, type RecentEntry, type ViewType } from "../../readmodels/views/index.js";
import { newestFirst } from "../../readmodels/views/lib.js";
import { cmpTime } from "../../readmodels/lib/time.js";
import { AppError, fieldIssue } from "../errors.js";

/**
 * Longest cursor taken. It carries the last entry's whole sort key, summary included (a
 * summary is client text of up to a few hundred characters), so it is longer than most.
 */
export const RECENT_CURSOR_MAX = 4096;

/**
 * Where a page ended: the last entry's place in newestFirst order (its whole sort key, as
 * entries of one log tie on time and log id), and how many entries equal to it in every
 * field have been given out, so that two identical entries split by a page both come back.
 * A key, not a position: entries that arrive between pages sort before it (newer) or take
 * their own place after it, and the pages already read never shift.
 */
interface RecentCursor {
  view_type: ViewType;
  at: RecentEntry;
  seen: number;
}

export interface RecentPageQuery {
  /** UTC instant: only entries with an event time at or after it. */
  since?: string;
  limit: number;
  cursor?: string;
}

export interface RecentPage {
  entries: RecentEntry[];
  /** Entries at or after `since` (all of them without it), across every page. */
  total_count: number;
  /** The cursor after the page's last entry, or null when no entry follows it. */
  next_cursor: string | null;
  /** The cursor after the page's first `n` entries (n ≥ 1), for a page cut short to fit an answer. */
  cursorAfter(n: number): string;
}

/**
 * One page of the entries behind a view, newest first. `location` names the cursor
 * parameter for the error a malformed cursor gets (["query", "cursor"], ["arguments", "cursor"]).
 */
export function recentPage(type: ViewType, state: PatientState, readAt: string | undefined, q: RecentPageQuery, location: (string | number)[]): RecentPage {
  const from = q.cursor === undefined ? undefined : decode(q.cursor, type, location);
  const since = q.since;
  const all = allRecentEntries(type, state, readAt).filter((e) => since === undefined || cmpTime(e.timestamp, since) >= 0);
  let start = 0;
  if (from) {
    // The first entry past the cursor's key, then past the copies of it already given out.
    while (start < all.length && newestFirst(all[start]!, from.at) < 0) start++;
    for (let skip = from.seen; skip > 0 && start < all.length && newestFirst(all[start]!, from.at) === 0; skip--) start++;
  }
  const entries = all.slice(start, start + Math.max(0, q.limit));
  const cursorAfter = (n: number) => encode(type, entries.slice(0, n), from);
  const more = start + entries.length < all.length;
  return { entries, total_count: all.length, next_cursor: more && entries.length > 0 ? cursorAfter(entries.length) : null, cursorAfter };
}

/**
 * The cursor after the last of `page` (not empty). The copies of that entry handed out so
 * far are those at the page's end, plus those the previous cursor counted when the whole
 * page is copies of its key.
 */
function encode(type: ViewType, page: readonly RecentEntry[], previous: RecentCursor | undefined): string {
  const at = page.at(-1)!;
  let seen = 0;
  for (let i = page.length - 1; i >= 0 && newestFirst(page[i]!, at) === 0; i--) seen++;
  if (seen === page.length && previous && newestFirst(previous.at, at) === 0) seen += previous.seen;
  return Buffer.from(JSON.stringify([type, at.timestamp, at.log_id, at.module_type, at.kind, at.summary, seen])).toString("base64url");
}

function decode(c: string, type: ViewType, location: (string | number)[]): RecentCursor {
  let k: unknown;
  try {
    k = JSON.parse(Buffer.from(c, "base64url").toString("utf8"));
  } catch {
    k = undefined;
  }
  const [view_type, timestamp, log_id, module_type, kind, summary, seen] = Array.isArray(k) ? (k as unknown[]) : [];
  const texts = [view_type, timestamp, log_id, module_type, kind, summary];
  if (!texts.every((x) => typeof x === "string") || typeof seen !== "number" || !Number.isSafeInteger(seen) || seen < 1) {
    const message = "must be the next_cursor of a previous answer, passed back unchanged; leave it out to start from the newest entry";
    throw new AppError("validation", `cursor ${message}`, [fieldIssue(location, message, c)]);
  }
  if (view_type !== type) {
    const message = `is the next_cursor of a ${String(view_type)} answer; page ${type} with the next_cursor of a ${type} answer, or leave it out to start from the newest entry`;
    throw new AppError("validation", `cursor ${message}`, [fieldIssue(location, message, c)]);
  }
  const at = { timestamp, log_id, module_type, kind, summary } as RecentEntry;
  return { view_type: type, at, seen };
}
