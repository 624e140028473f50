import type { LogType } from "../catalog/log-types.js";
import type { Transport } from "./http.js";
import type { LogRow } from "./types.js";
import type { paths } from "./wire.js";

type QueryRoute = paths["/v1/state/logs/query"]["post"];
/** The body as the routes' schema states it; its nested filter groups are left open there, and typed here. */
type SchemaBody = QueryRoute["requestBody"]["content"]["application/json"];
type SchemaNode = NonNullable<SchemaBody["filter"]>[number];

export type FilterOp = NonNullable<SchemaNode["op"]>;
export type Scalar = string | number | boolean;
export interface Condition {
  /** type, timestamp, trace, payload or a dotted payload path (payload.symptoms.0.score). */
  field: string;
  op: FilterOp;
  value?: SchemaNode["value"];
}
export type FilterNode = Condition | { or: FilterNode[] } | { and: FilterNode[] };
export type AggOp = NonNullable<SchemaBody["aggregations"]>[number]["op"];
export type SelectItem = string | { path: string; alias?: string };
/**
 * An array in the payload (`path`), its elements kept by `where` (fields are paths inside
 * the element; the array's own path is the element itself) and read at `element`; answered
 * as the first kept one (null when none) with `first: true`, else the list.
 */
export interface ArraySelectItem {
  path: string;
  first: boolean;
  alias?: string;
  where?: FilterNode | FilterNode[];
  element?: string;
}

/** The log query body (contract "Log query"), as both query routes take it. */
export type QueryBody = Omit<SchemaBody, "filter" | "select"> & {
  filter?: FilterNode[];
  select?: ({ path: string; alias?: string } | ArraySelectItem)[];
};

export type QueryAnswer = QueryRoute["responses"][200]["content"]["application/json"];

/** A query row without select or group_by: the whole log, as GET /v1/state/{id}/logs answers it. */
export type LogEntry = LogRow;

/** A row of `.typed()`: the log type narrowed to the catalog's names and the times parsed. */
export interface TypedLogEntry<P = Record<string, unknown>> {
  id: string;
  type: LogType;
  timestamp: Date;
  ingested_at: Date;
  trace: LogRow["trace"];
  payload: P;
}

/**
 * A page of query rows: a real array (iterable, indexable, `length`) that also carries
 * what the answer said about the rest. `map`/`filter` give plain arrays.
 */
export class QueryResult<T> extends Array<T> {
  /** Rows (or groups) matching, ignoring limit/offset; null unless `.includeTotal()`. */
  totalCount: number | null = null;
  /** More rows exist past this page. */
  hasMore = false;
  organizationId: string | undefined;
  patientId: string | null | undefined;
  /** The service's wait for your own earlier writes ran out (x-pss-stale): rows may miss them. */
  stale = false;

  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  static fromAnswer<T>(a: QueryAnswer, rows: T[], stale = false): QueryResult<T> {
    const r = new QueryResult<T>();
    r.stale = stale;
    for (const row of rows) r.push(row);
    r.totalCount = a.total_count ?? null;
    r.hasMore = a.has_more ?? false;
    r.organizationId = a.organization_id;
    r.patientId = a.patient_id;
    return r;
  }
}

/** Condition builders for `.or([...])` / `.and([...])`: `.or([f.gt('payload.score', 5), f.ilike('trace', 'visit-%')])`. */
export const f = {
  eq: (field: string, value: Scalar): Condition => ({ field, op: "eq", value }),
  neq: (field: string, value: Scalar): Condition => ({ field, op: "neq", value }),
  gt: (field: string, value: string | number): Condition => ({ field, op: "gt", value }),
  gte: (field: string, value: string | number): Condition => ({ field, op: "gte", value }),
  lt: (field: string, value: string | number): Condition => ({ field, op: "lt", value }),
  lte: (field: string, value: string | number): Condition => ({ field, op: "lte", value }),
  in: (field: string, values: (string | number)[]): Condition => ({ field, op: "in", value: values }),
  nin: (field: string, values: (string | number)[]): Condition => ({ field, op: "nin", value: values }),
  like: (field: string, pattern: string): Condition => ({ field, op: "like", value: pattern }),
  ilike: (field: string, pattern: string): Condition => ({ field, op: "ilike", value: pattern }),
  is: (field: string, value: null | "not_null"): Condition => ({ field, op: "is", value }),
  exists: (field: string, value = true): Condition => ({ field, op: "exists", value }),
  contains: (field: string, value: Scalar): Condition => ({ field, op: "contains", value }),
  or: (...nodes: FilterNode[]): FilterNode => ({ or: nodes }),
  and: (...nodes: FilterNode[]): FilterNode => ({ and: nodes }),
};

type Scope = { patientId?: string; patientIds?: string[] };

/**
 * The log query builder: fluent, immutable (each call returns a new query, so a base query
 * can be reused) and thenable: `await` runs it and gives a `QueryResult`.
 *
 *     const rows = await client.logs(pid).eq("type", "symptom_report").gt("payload.score", 3)
 *       .order("timestamp", { desc: true }).limit(10);
 */
export class LogQuery<Row = LogEntry> implements PromiseLike<QueryResult<Row>> {
  constructor(
    private readonly transport: Transport,
    private readonly scope: Scope,
    private readonly body: QueryBody = {},
  ) {}

  private with<R = Row>(patch: Partial<QueryBody>): LogQuery<R> {
    return new LogQuery<R>(this.transport, this.scope, { ...this.body, ...patch });
  }

  private where(node: FilterNode): LogQuery<Row> {
    return this.with({ filter: [...(this.body.filter ?? []), node] });
  }

  /** field = value (strings, numbers; booleans on payload paths). */
  eq(field: string, value: Scalar) { return this.where(f.eq(field, value)); }
  /** field ≠ value; a log lacking the path does not match. */
  neq(field: string, value: Scalar) { return this.where(f.neq(field, value)); }
  /** field > value: numbers on payload paths, ISO 8601 on timestamp (a date alone is UTC midnight). */
  gt(field: string, value: string | number) { return this.where(f.gt(field, value)); }
  /** field ≥ value. */
  gte(field: string, value: string | number) { return this.where(f.gte(field, value)); }
  /** field < value. */
  lt(field: string, value: string | number) { return this.where(f.lt(field, value)); }
  /** field ≤ value. */
  lte(field: string, value: string | number) { return this.where(f.lte(field, value)); }
  /** field is one of values (at most 1000). */
  in(field: string, values: (string | number)[]) { return this.where(f.in(field, values)); }
  /** field is none of values; a log lacking the path does not match. */
  nin(field: string, values: (string | number)[]) { return this.where(f.nin(field, values)); }
  /** SQL LIKE: % any run, _ one character, \ escapes. */
  like(field: string, pattern: string) { return this.where(f.like(field, pattern)); }
  /** Case-insensitive LIKE. */
  ilike(field: string, pattern: string) { return this.where(f.ilike(field, pattern)); }
  /** null: missing or JSON null; "not_null": present and not null. */
  is(field: string, value: null | "not_null") { return this.where(f.is(field, value)); }
  /** The payload path is present (true, default) or absent (false). */
  exists(field: string, value = true) { return this.where(f.exists(field, value)); }
  /** An array holding the element, or a string holding the substring. */
  contains(field: string, value: Scalar) { return this.where(f.contains(field, value)); }
  /** Any of the conditions holds. */
  or(nodes: FilterNode[]) { return this.where({ or: nodes }); }
  /** All of the conditions hold (for nesting inside `or`). */
  and(nodes: FilterNode[]) { return this.where({ and: nodes }); }
  /** A raw filter node of the wire format. */
  filter(node: FilterNode) { return this.where(node); }

  /** Adds a sort term; default order is timestamp descending. */
  order(field: string, o: { desc?: boolean } = {}): LogQuery<Row> {
    return this.with({ order: [...(this.body.order ?? []), { field, ...(o.desc ? { desc: true } : {}) }] });
  }
  /** Most rows (or groups). @default 100 (the service's), at most 1000 */
  limit(n: number): LogQuery<Row> { return this.with({ limit: n }); }
  /** Rows to skip, at most 100,000. */
  offset(n: number): LogQuery<Row> { return this.with({ offset: n }); }
  /** Ask for `totalCount` (rows matching, ignoring limit and offset). */
  includeTotal(): LogQuery<Row> { return this.with({ include_total: true }); }

  /** Only these fields: `{ score: 'payload.score' }` (alias → path), or paths / `{path, alias}` items. */
  select<M extends Record<string, string>>(aliases: M): LogQuery<{ [K in keyof M]: unknown }>;
  select(...items: (SelectItem | SelectItem[])[]): LogQuery<Record<string, unknown>>;
  select(...args: unknown[]): LogQuery<never> {
    const first = args[0];
    const items: SelectItem[] =
      args.length === 1 && typeof first === "object" && first !== null && !Array.isArray(first) && !("path" in first)
        ? Object.entries(first as Record<string, string>).map(([alias, path]) => ({ path, alias }))
        : (args.flat() as SelectItem[]);
    const select = items.map((i) => (typeof i === "string" ? { path: i } : i));
    return this.with({ select: [...(this.body.select ?? []), ...select] });
  }

  /**
   * An array select: `.selectArray('payload.symptoms', { first: true, where: f.gte('score', 7), element: 'name', alias: 'worst' })`
   * answers each row's first symptom name scoring 7 or more (null when none); `first: false`
   * (the default) the list of them.
   */
  selectArray(path: string, o: Omit<ArraySelectItem, "path" | "first"> & { first?: boolean } = {}): LogQuery<Record<string, unknown>> {
    return this.with({ select: [...(this.body.select ?? []), { path, ...o, first: o.first ?? false }] });
  }

  /** Group rows by fields; follow with aggregations (`.count('n')`, `.avg(path, alias)`, ...). */
  groupBy(...fields: string[]): LogQuery<Record<string, unknown>> {
    return this.with({ group_by: [...(this.body.group_by ?? []), ...fields] });
  }

  private agg<A extends string>(op: AggOp, alias: A, field?: string): LogQuery<Row & { [K in A]: number | null }> {
    return this.with({ aggregations: [...(this.body.aggregations ?? []), { op, alias, ...(field !== undefined ? { field } : {}) }] });
  }
  /** Sum of a numeric payload path per group, under `alias`. */
  sum<A extends string>(field: string, alias: A) { return this.agg("sum", alias, field); }
  /** Average of a numeric payload path per group, under `alias`. */
  avg<A extends string>(field: string, alias: A) { return this.agg("avg", alias, field); }
  /** Smallest value of a payload path or timestamp per group. */
  min<A extends string>(field: string, alias: A) { return this.agg("min", alias, field); }
  /** Largest value of a payload path or timestamp per group. */
  max<A extends string>(field: string, alias: A) { return this.agg("max", alias, field); }

  /**
   * With an alias: an aggregation (rows per group under that alias). Without: runs the
   * query as a server-side count and resolves to the number of matching logs.
   */
  count<A extends string>(alias: A): LogQuery<Row & { [K in A]: number | null }>;
  count(): Promise<number>;
  count(alias?: string): unknown {
    if (alias !== undefined) return this.agg("count", alias);
    return this.with({ count: true }).execute().then(({ answer }) => answer.count);
  }

  /** Rows as typed log entries (log type narrowed, timestamp a Date); not with select or group_by. */
  typed<P = Record<string, unknown>>(): LogQuery<TypedLogEntry<P>> {
    return this.with({ typed: true });
  }

  /** Exactly one row; the service answers 422 (ValidationError) for none or more. */
  async single(): Promise<Row> {
    const { answer } = await this.with({ single: true }).execute();
    // Never undefined: the service refuses a single() that matches no row.
    return this.rows(answer).at(0) as Row;
  }

  /** Zero or one row (null for none); more than one is a ValidationError. */
  async maybeSingle(): Promise<Row | null> {
    const { answer } = await this.with({ maybe_single: true }).execute();
    return this.rows(answer)[0] ?? null;
  }

  /** The wire body this query sends. */
  toBody(): QueryBody {
    return { ...(this.scope.patientIds ? { patient_ids: this.scope.patientIds } : {}), ...structuredClone(this.body) };
  }

  /** Runs the query. */
  async run(): Promise<QueryResult<Row>> {
    const { answer, stale } = await this.execute();
    return QueryResult.fromAnswer(answer, this.rows(answer), stale);
  }

  then<A = QueryResult<Row>, B = never>(onfulfilled?: ((v: QueryResult<Row>) => A | PromiseLike<A>) | null, onrejected?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.run().then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<QueryResult<Row> | B> {
    return this.run().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<QueryResult<Row>> {
    return this.run().finally(onfinally);
  }

  private async execute(): Promise<{ answer: QueryAnswer; stale: boolean }> {
    const path = this.scope.patientId !== undefined ? `/v1/state/${encodeURIComponent(this.scope.patientId)}/logs/query` : "/v1/state/logs/query";
    // A read sent as POST (for its body): safe to retry.
    const a = await this.transport.send<QueryAnswer>("POST", path, { body: this.toBody(), idempotent: true });
    return { answer: a.data, stale: a.headers.get("x-pss-stale") === "true" };
  }

  private rows(a: QueryAnswer): Row[] {
    const rows = a.rows ?? [];
    if (!this.body.typed) return rows as Row[];
    return rows.map((r) => {
      const e = r as LogEntry;
      return { id: e.id, type: e.type as LogType, timestamp: new Date(e.timestamp), ingested_at: new Date(e.ingested_at), trace: e.trace ?? null, payload: e.payload } as Row;
    });
  }
}
