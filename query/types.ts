import type { ErrorDetail } from "../catalog/validation-item.js";

/**
 * Who is asking. The compiler puts these in every WHERE clause itself, so no caller can
 * forget tenancy or widen it through the body.
 */
export interface CompileScope {
  organization_id: string;
  project_id: string;
  /** Set by the single-patient route and for patient tokens: the query sees this patient only. */
  patient_id?: string;
}

/** What a body may cost; over any of these the body is refused with a 422. */
export interface CompileLimits {
  /** Largest `limit` a body may ask for. @default 1000 (rows or groups) */
  maxLimit: number;
  /** Rows (or groups) when the body gives no `limit`. @default 100 */
  defaultLimit: number;
  /** Longest `in`/`nin` list, and longest `patient_ids` cohort. @default 1000 */
  maxInList: number;
  /** Deepest nesting of `or`/`and` groups; a group in the top-level list is depth 1. @default 5 */
  maxDepth: number;
  /** Most leaf conditions in `filter`, counted across all groups. @default 50 */
  maxConditions: number;
}

export const DEFAULT_LIMITS: CompileLimits = { maxLimit: 1000, defaultLimit: 100, maxInList: 1000, maxDepth: 5, maxConditions: 50 };

/** Deepest page a body may ask for: deep offsets make ClickHouse read and drop every row before them. */
export const MAX_OFFSET = 100_000;

export const FILTER_OPS = ["eq", "neq", "gt", "gte", "lt", "lte", "in", "nin", "like", "ilike", "is", "exists", "contains"] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export const AGG_OPS = ["count", "sum", "avg", "min", "max"] as const;
export type AggOp = (typeof AGG_OPS)[number];

/**
 * How `shapeRows` turns result columns into answer rows. Result columns are positional
 * (`s{i}`, `g{i}`, `a{i}`) so that no alias or path from the body is ever written into SQL.
 */
export interface QueryShape {
  /**
   * The `select` entries in order; column `s{i}` holds entry i, answered under `key` (alias,
   * else path). `array`: an array select answering its first kept element or the list.
   */
  select?: { key: string; path: string; array?: "first" | "list" }[];
  /** The `group_by` fields in order; column `g{i}` holds key i. */
  groupKeys?: string[];
  /** The aggregations in order; column `a{i}` holds entry i, answered under `alias`. */
  aggregations?: { alias: string; op: AggOp; field?: string }[];
}

/** Result columns read for the audit and never answered (compile.ts, auditedPatients). */
export const AUDIT_COLUMNS = { patient: "audit_patient_id", patients: "audit_patient_ids", patientCount: "audit_patient_count" } as const;

export interface CompiledQuery {
  /** ClickHouse SQL with `{name:Type}` placeholders only; no value, path or alias from the body. */
  sql: string;
  /** Values for the placeholders (scope: org, project, patient/patients; body: p0…, path keys k0…; limit, offset). */
  params: Record<string, unknown>;
  /** With include_total: the number of matching rows (or groups), ignoring limit and offset; result column `n`. */
  countSql?: string;
  countParams?: Record<string, unknown>;
  /** rows: log rows or a projection; count: one row with column `n`; group: one row per group. */
  kind: "rows" | "count" | "group";
  shape: QueryShape;
  single: boolean;
  maybeSingle: boolean;
  typed: boolean;
  /**
   * Rows the answer may carry: the body's limit, or 2 for single/maybe_single so the caller
   * sees a second row. The SQL fetches limit + 1 so `pageRows` can tell has_more without a
   * count. 0 for count.
   */
  limit: number;
  offset: number;
}

/**
 * A body the compiler refuses, with details locating each problem (e.g.
 * ["body","filter",0,"field"]) as the spec's validation items. The service answers it as
 * a 422 validation_error (src/query/log-query-service.ts).
 */
export class QueryValidationError extends Error {
  override name = "QueryValidationError";
  readonly details: ErrorDetail[];
  constructor(details: ErrorDetail[], options?: { cause?: unknown }) {
    const first = details[0];
    const summary = details.length === 1 && first ? `${first.field ? `${first.field}: ` : ""}${first.message}` : `${details.length} problems`;
    super(`Invalid log query: ${summary}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.details = details;
  }
}

export function isQueryValidationError(err: unknown): err is QueryValidationError {
  return err instanceof QueryValidationError;
}
