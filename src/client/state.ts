import type { Transport } from "./http.js";
import type {
  Block, BlockList, EventModuleList, EventPage, EventRow, LogPage, LogRow, ModuleRead, RecentEntries, StableAnswer, View, ViewList,
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

export interface LogReadOptions {
  /** ISO 8601; logs at or after. */
  since?: string;
  /** ISO 8601; logs at or before. */
  until?: string;
  logTypes?: string[];
  trace?: string;
  /** Logs per page, 1-500. @default 50 */
  limit?: number;
  cursor?: string;
  /** By event time. @default "desc" (newest first) */
  order?: "asc" | "desc";
}

/** Compiled patient state: the REST twins of the MCP tools (scope sdk:state-read). Reads see your own earlier writes. */
export class StateApi {
  constructor(private readonly t: Transport) {}

  private get<T>(pid: string, rest: string, query?: Record<string, string | number | string[] | undefined>, as?: "text"): Promise<T> {
    return this.t.request<T>("GET", `/v1/state/${seg(pid)}${rest}`, { query, ...(as ? { as } : {}) });
  }

  /** Stable modules (demographics, medications, ...), all or those named. */
  stable(patientId: string, o: { modules?: string[] } = {}): Promise<StableAnswer> {
    return this.get(patientId, "/stable", { modules: o.modules });
  }
  /** Event-state modules that hold data. */
  eventModules(patientId: string): Promise<EventModuleList> {
    return this.get(patientId, "/event-modules");
  }
  /** One event-state module (symptoms, lab_results, vitals, ...); NotFoundError for an unknown module type. */
  eventModule(patientId: string, moduleType: string): Promise<ModuleRead & { patient_id: string }> {
    return this.get(patientId, `/event-modules/${seg(moduleType)}`);
  }
  /** Every view type with whether it has blocks and temporary items. */
  views(patientId: string): Promise<ViewList> {
    return this.get(patientId, "/views");
  }
  /** One view as JSON blocks (@default format "raw"), or as one markdown document (a string). */
  view(patientId: string, viewType: string, o?: { format?: "raw" }): Promise<View>;
  view(patientId: string, viewType: string, o: { format: "markdown" }): Promise<string>;
  view(patientId: string, viewType: string, o: { format?: "raw" | "markdown" } = {}): Promise<View | string> {
    const format = o.format ?? "raw";
    return this.get(patientId, `/views/${seg(viewType)}`, { format }, format === "markdown" ? "text" : undefined);
  }
  /** The blocks of one view. */
  blocks(patientId: string, viewType: string): Promise<BlockList> {
    return this.get(patientId, `/views/${seg(viewType)}/blocks`);
  }
  /** One block, with `refs`: the ids of the logs behind it. */
  block(patientId: string, viewType: string, blockId: string): Promise<Block> {
    return this.get(patientId, `/views/${seg(viewType)}/blocks/${seg(blockId)}`);
  }
  /** The recent dated entries behind a view, newest first. limit 1-200, @default 20. */
  recent(patientId: string, viewType: string, o: { limit?: number } = {}): Promise<RecentEntries> {
    return this.get(patientId, `/views/${seg(viewType)}/recent`, { limit: o.limit });
  }
  /** The patient's raw logs, newest first unless `order: "asc"`; await for one page or iterate. */
  logs(patientId: string, o: LogReadOptions = {}): Paged<LogPage, LogRow> {
    const query = { since: o.since, until: o.until, log_types: o.logTypes, trace: o.trace, limit: o.limit, order: o.order };
    return new Paged((cursor) => this.get<LogPage>(patientId, "/logs", { ...query, cursor }), (p) => p.logs, o.cursor);
  }
  /** The audit of what each applied log changed, oldest first; await for one page or iterate. */
  events(patientId: string, o: { since?: string; until?: string; limit?: number; cursor?: string } = {}): Paged<EventPage, EventRow> {
    const query = { since: o.since, until: o.until, limit: o.limit };
    return new Paged((cursor) => this.get<EventPage>(patientId, "/events", { ...query, cursor }), (p) => p.events, o.cursor);
  }
}
