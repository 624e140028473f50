import type { Transport } from "./http.js";
import type {
  Block, BlockList, EventModule, FhirBundle, EventModuleList, EventPage, EventRow, Freshness, LogPage, LogRow, MemoryList, RecentEntries, RecentItem, StableAnswer, StateChanges, StateDiff, View, ViewList,
} from "./types.js";

const seg = encodeURIComponent;

/**
 * A cursor-paged read: `await` it for the first page, `for await (const page of it)` for
 * every page, or `for await (const item of it.items())` for every item.
 */
export class Paged<P extends { next_cursor: string | null }, I> implements PromiseLike<P> {
  constructor(
    private readonly fetchPage: (cursor: string | undefined) => Promise<P>,
    private readonly itemsOf: (p: P) => I[],
    private readonly firstCursor?: string,
  ) {}

  then<A = P, B = never>(onfulfilled?: ((v: P) => A | PromiseLike<A>) | null, onrejected?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.fetchPage(this.firstCursor).then(onfulfilled, onrejected);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<P> {
    let cursor = this.firstCursor;
    for (;;) {
      const page = await this.fetchPage(cursor);
      yield page;
      if (page.next_cursor === null || page.next_cursor === undefined) return;
      cursor = page.next_cursor;
    }
  }

  /** Every item of every page, fetched page by page as the loop asks. */
  async *items(): AsyncGenerator<I> {
    for await (const page of this) yield* this.itemsOf(page);
  }
}

/**
 * The state at a past time, on any state read but logs, events and memories: the answer is
 * folded afresh from the patient's log, and repeats `as_of` and `known_at`.
 */
export interface AtOptions {
  /** ISO 8601: the state from the logs whose event time is at or before it. */
  asOf?: string;
  /** ISO 8601, not after now: the state from the logs the service had accepted by then. */
  knownAt?: string;
}

const at = (o: AtOptions) => ({ as_of: o.asOf, known_at: o.knownAt });

export interface DiffOptions {
  /** ISO 8601: the earlier state. */
  from: string;
  /** ISO 8601: the later state. @default now */
  to?: string;
  /** event: from/to are as_of; known: known_at. @default "event" */
  basis?: "event" | "known";
}

export type FhirSearchType = "Observation" | "Condition" | "AllergyIntolerance" | "MedicationStatement" | "Immunization" | "Procedure";

export interface FhirSearchOptions extends AtOptions {
  /** Observation only: system|code, |code or code; an array means all of, a comma any of. */
  code?: string | string[];
  /** Observation only: laboratory, vital-signs or procedure. */
  category?: string | string[];
  /** Observation only: the effective time with a FHIR prefix (ge2026-01-01); an array for a range. */
  date?: string | string[];
  /** Adds each match's Provenance (the logs it came from). @default false */
  provenance?: boolean;
}

export interface LogReadOptions {
  /** ISO 8601; logs at or after. */
  since?: string;
  /** ISO 8601; logs at or before. */
  until?: string;
  /** Log types or legacy names. */
  logTypes?: string[];
  /** The whole trace: a string trace as sent, an object trace as "object_type:object_id". */
  trace?: string;
  /** Only logs whose trace has this object_type (a string trace has none). */
  traceType?: string;
  /** Only logs whose trace has this object_id (a string trace is all id). */
  traceId?: string;
  /** Only these logs (a view entry's log_id, a change's log_ids), at most 100 distinct ids. */
  logIds?: string[];
  /** Logs per page, 1-500. @default 50 */
  limit?: number;
  cursor?: string;
  /** By event time. @default "desc" (newest first) */
  order?: "asc" | "desc";
}

export interface EventReadOptions {
  /** ISO 8601; events triggered (logs accepted) at or after. */
  since?: string;
  /** ISO 8601; events triggered at or before. */
  until?: string;
  /** Only events of these log types (or legacy names). */
  logTypes?: string[];
  /** Only events of logs whose trace has this object_type / object_id (as for logs). */
  traceType?: string;
  traceId?: string;
  /** Only events of these logs, at most 100 distinct ids. */
  logIds?: string[];
  /**
   * complete: every event (applied or no_change); applied, no_change: those; pending and
   * failed: none here (reads wait for every accepted log to be applied, and applying cannot fail).
   * @default every event
   */
  status?: "complete" | "applied" | "no_change" | "pending" | "failed";
  /** Events per page, 1-500. @default 50 */
  limit?: number;
  cursor?: string;
}

/**
 * Compiled patient state: the REST twins of the MCP tools (scope sdk:state-read). Reads
 * see your own earlier writes, unless waiting for them ran out: then the answer's
 * `stale` (see Freshness) is true.
 */
export class StateApi {
  constructor(private readonly t: Transport) {}

  private get<T>(pid: string, rest: string, query?: Record<string, string | number | string[] | undefined>): Promise<T & Freshness> {
    return this.t.send<T>("GET", `/v1/state/${seg(pid)}${rest}`, { query }).then((a) => withFreshness(a.data, a.headers));
  }

  /** Stable modules (demographics, medications, ...), all or those named. */
  stable(patientId: string, o: { modules?: string[] } & AtOptions = {}): Promise<StableAnswer & Freshness> {
    return this.get(patientId, "/stable", { modules: o.modules, ...at(o) });
  }
  /** Event-state modules that hold data. */
  eventModules(patientId: string, o: AtOptions = {}): Promise<EventModuleList & Freshness> {
    return this.get(patientId, "/event-modules", at(o));
  }
  /** One event-state module (symptoms, lab_results, vitals, ...); NotFoundError for an unknown module type. */
  eventModule(patientId: string, moduleType: string, o: AtOptions = {}): Promise<EventModule & Freshness> {
    return this.get(patientId, `/event-modules/${seg(moduleType)}`, at(o));
  }
  /** Every view type with whether it has blocks and temporary items. */
  views(patientId: string, o: AtOptions = {}): Promise<ViewList & Freshness> {
    return this.get(patientId, "/views", at(o));
  }
  /** One view as JSON blocks (@default format "raw"), or as one markdown document (a plain string, without `stale`). */
  view(patientId: string, viewType: string, o?: { format?: "raw" } & AtOptions): Promise<View & Freshness>;
  view(patientId: string, viewType: string, o: { format: "markdown" } & AtOptions): Promise<string>;
  view(patientId: string, viewType: string, o: { format?: "raw" | "markdown" } & AtOptions = {}): Promise<(View & Freshness) | string> {
    const format = o.format ?? "raw";
    if (format === "markdown") return this.t.request<string>("GET", `/v1/state/${seg(patientId)}/views/${seg(viewType)}`, { query: { format, ...at(o) }, as: "text" });
    return this.get<View>(patientId, `/views/${seg(viewType)}`, { format, ...at(o) });
  }
  /** The blocks of one view. */
  blocks(patientId: string, viewType: string, o: AtOptions = {}): Promise<BlockList & Freshness> {
    return this.get(patientId, `/views/${seg(viewType)}/blocks`, at(o));
  }
  /** One block, with `refs`: the ids of the logs behind it. */
  block(patientId: string, viewType: string, blockId: string, o: AtOptions = {}): Promise<Block & Freshness> {
    return this.get(patientId, `/views/${seg(viewType)}/blocks/${seg(blockId)}`, at(o));
  }
  /**
   * The recent dated entries behind a view, newest first: `entries` as one-line strings,
   * `items` as objects; await for one page or iterate (items() yields the objects). `since`
   * (ISO 8601) keeps entries at or after it. limit 1-200 per page, @default 20.
   */
  recent(patientId: string, viewType: string, o: { limit?: number; since?: string; cursor?: string } & AtOptions = {}): Paged<RecentEntries & Freshness, RecentItem> {
    const query = { limit: o.limit, since: o.since, ...at(o) };
    return new Paged((cursor) => this.get<RecentEntries>(patientId, `/views/${seg(viewType)}/recent`, { ...query, cursor }), (p) => p.items, o.cursor);
  }
  /**
   * What changed between the state at `from` and at `to` (by event time, or with basis
   * "known" by acceptance time): the modules, and per module the top-level payload fields
   * with their values before and after (large ones as counts, in `summary`).
   */
  diff(patientId: string, o: DiffOptions): Promise<StateDiff & Freshness> {
    return this.get(patientId, "/diff", { from: o.from, to: o.to, basis: o.basis });
  }
  /**
   * What changed after `since` (up to `until`, default now), by clinical domain: symptoms,
   * labs, medications, vitals, devices, questionnaires, encounters; each item with its log ids.
   */
  changes(patientId: string, o: { since: string; until?: string }): Promise<StateChanges & Freshness> {
    return this.get(patientId, "/changes", { since: o.since, until: o.until });
  }
  /**
   * The state as an International Patient Summary style FHIR R4 document Bundle: a
   * Composition first, then Patient, Conditions, AllergyIntolerances, MedicationStatements,
   * Immunizations, Procedures, lab and vital-sign Observations, and one Provenance per
   * resource naming the logs it came from (docs/fhir.md).
   */
  fhirSummary(patientId: string, o: AtOptions = {}): Promise<FhirBundle & Freshness> {
    return this.get(patientId, "/fhir/summary", at(o));
  }
  /**
   * A FHIR searchset of one resource type. Observation takes `code` (system|code or code),
   * `category` (laboratory, vital-signs, procedure) and `date` (FHIR prefixes eq, ne, gt,
   * lt, ge, le on the effective time; several for a range); `provenance` adds each match's
   * Provenance (_revinclude=Provenance:target).
   */
  fhirSearch(patientId: string, resourceType: FhirSearchType, o: FhirSearchOptions = {}): Promise<FhirBundle & Freshness> {
    const query = { code: o.code, category: o.category, date: o.date, _revinclude: o.provenance ? "Provenance:target" : undefined, ...at(o) };
    return this.get(patientId, `/fhir/${seg(resourceType)}`, query);
  }
  /** The patient's raw logs, newest first unless `order: "asc"`; await for one page or iterate. */
  logs(patientId: string, o: LogReadOptions = {}): Paged<LogPage & Freshness, LogRow> {
    const query = { since: o.since, until: o.until, log_types: o.logTypes, trace: o.trace, trace_type: o.traceType, trace_id: o.traceId, log_ids: o.logIds, limit: o.limit, order: o.order };
    return new Paged((cursor) => this.get<LogPage>(patientId, "/logs", { ...query, cursor }), (p) => p.logs, o.cursor);
  }
  /** The audit of what each applied log changed, oldest first; await for one page or iterate. */
  events(patientId: string, o: EventReadOptions = {}): Paged<EventPage & Freshness, EventRow> {
    const query = { since: o.since, until: o.until, log_type: o.logTypes, trace_type: o.traceType, trace_id: o.traceId, log_ids: o.logIds, status: o.status, limit: o.limit };
    return new Paged((cursor) => this.get<EventPage>(patientId, "/events", { ...query, cursor }), (p) => p.events, o.cursor);
  }
  /**
   * The patient's memories, newest first: memory_report logs and conversation summaries.
   * `query` keeps those whose content contains it (any case). limit 1-1000, @default 100.
   */
  memories(patientId: string, o: { query?: string; limit?: number } = {}): Promise<MemoryList & Freshness> {
    return this.get(patientId, "/memories", { query: o.query, limit: o.limit });
  }
}

/** The answer with its non-enumerable `stale` flag from the x-pss-stale header. */
function withFreshness<T>(data: T, headers: Headers): T & Freshness {
  const stale = headers.get("x-pss-stale") === "true";
  if (typeof data === "object" && data !== null) Object.defineProperty(data, "stale", { value: stale, enumerable: false, configurable: true });
  return data as T & Freshness;
}
