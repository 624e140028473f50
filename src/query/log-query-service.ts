import type { NatsConnection } from "@nats-io/transport-node";
import type { ClickHouseClient } from "@clickhouse/client";
import { ClickHouseQueryError, isClickHouseOwnerAbsent, queryClickHouseRpc, runQuery, type QueryRequest } from "../../infra/clickhouse/rpc.js";
import { assertIdentifier, projectedSeqKey } from "../../infra/clickhouse/schema.js";
import type { Redis } from "../../infra/redis/connection.js";
import { auditedPatients, compileLogQuery, countOf, DEFAULT_LIMITS, isQueryValidationError, pageRows, type CompileScope, type CompiledQuery } from "../../query/index.js";
import type { Principal } from "../auth/scopes.js";
import { AppError, notFound } from "../errors.js";

export interface QueryOptions {
  /** Longest a query may run in ClickHouse. @default 10_000 ms */
  timeoutMs: number;
  /** Most rows one query may read before it is refused as too costly. @default 200_000_000 */
  maxRowsToRead: number;
  /** Longest a query waits for the projector to reach the caller's writes. @default 2_000 ms */
  maxWaitMs: number;
}

export interface QueryAnswer {
  count: number;
  rows?: unknown[];
  organization_id?: string;
  patient_id?: string | null;
  total_count?: number | null;
  has_more?: boolean;
}

/** Patients an answer carries data of: listed, and counted past the list. */
export interface AuditedPatients {
  ids: string[];
  omitted: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Longest a permanent deletion waits for the projector to copy what was accepted before it. */
const ERASE_WAIT_MS = 30_000;

/** ClickHouse error codes that mean "this query costs too much", not "the service failed". */
const TOO_COSTLY = new Set(["158", "159", "160", "241", "396", "RESULT_TOO_LARGE", "TOO_MANY_ROWS", "TIMEOUT_EXCEEDED"]);

/**
 * Runs compiled log queries: waits (bounded) until the projector has copied every log
 * accepted in the project before the query, then runs it on the embedded ClickHouse or the
 * configured server (through the worker process when this one does not own it).
 */
export class LogQueryService {
  private readonly db: string;

  constructor(
    private readonly deps: {
      /** The ClickHouse this process may query itself; null: ask the member that projects into the embedded copy. */
      client: () => ClickHouseClient | null;
      nc: NatsConnection;
      namespace: string;
      redis: Redis;
      /** Highest stream sequence accepted in the project (0 when none). */
      projectAccepted: (projectId: string) => Promise<number>;
      /** In-process projector, when this process runs it. */
      projector: () => { readonly projectedSeq: number } | null;
      options: QueryOptions;
    },
  ) {
    this.db = assertIdentifier(deps.namespace);
  }

  private async projected(): Promise<number> {
    const p = this.deps.projector();
    if (p) return p.projectedSeq;
    return Number((await this.deps.redis.get(projectedSeqKey(this.deps.namespace))) ?? 0);
  }

  /** Read-your-writes: a query after a batch's answer sees the batch. */
  private async waitForProjector(projectId: string, maxWaitMs = this.deps.options.maxWaitMs): Promise<boolean> {
    const target = await this.deps.projectAccepted(projectId);
    const deadline = Date.now() + maxWaitMs;
    for (let delay = 2; ; delay = Math.min(delay * 2, 50)) {
      if ((await this.projected()) >= target) return true;
      if (Date.now() >= deadline) return false;
      await sleep(delay);
    }
  }

  private async exec(sql: string, params: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    const q: QueryRequest = {
      // The compiler names the table `logs`; each namespace has its own database.
      sql: sql.replace(/\bFROM logs\b/g, `FROM ${this.db}.logs`),
      params,
      settings: {
        max_execution_time: Math.ceil(this.deps.options.timeoutMs / 1000),
        max_rows_to_read: this.deps.options.maxRowsToRead,
        read_overflow_mode: "throw",
      },
    };
    try {
      return await this.send(q, this.deps.options.timeoutMs + 2_000);
    } catch (err) {
      const code = err instanceof ClickHouseQueryError ? String(err.code ?? "") : "";
      if (TOO_COSTLY.has(code) || /TIMEOUT_EXCEEDED|TOO_MANY_ROWS|too large/i.test((err as Error).message)) {
        throw new AppError("validation", "query too costly: narrow the filter (type, patient, time range) or lower the limit", [
          { type: "query_too_costly", message: (err as Error).message.slice(0, 300) },
        ]);
      }
      throw err;
    }
  }

  /**
   * Runs a request on the ClickHouse this process owns, else through the worker process
   * that owns it. While no worker answers (it starts, or is being restarted), the request
   * waits up to the read wait, then is a 503 with Retry-After: nothing ran.
   */
  private async send(q: QueryRequest, rpcTimeoutMs: number): Promise<Record<string, unknown>[]> {
    const client = this.deps.client();
    if (client) return runQuery(client, q);
    const deadline = Date.now() + this.deps.options.maxWaitMs;
    for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
      try {
        return await queryClickHouseRpc(this.deps.nc, this.deps.namespace, q, rpcTimeoutMs);
      } catch (err) {
        if (!isClickHouseOwnerAbsent(err)) throw err;
        if (Date.now() + delay > deadline) {
          throw new AppError("unavailable", "the log query store is starting (its worker process does not answer yet); retry shortly", [{ type: "query_store_unavailable", message: err.message }], {
            cause: err,
            headers: { "retry-after": "1" },
          });
        }
        await sleep(delay);
      }
    }
  }

  /**
   * Erases a patient's logs from the query store (permanent deletion), once the projector
   * has copied everything accepted in the project: a log still on its way would otherwise
   * land after the delete. Runs where the query runs (through the worker process when
   * this one does not own ClickHouse).
   */
  async erasePatient(scope: { organization_id: string; project_id: string }, patientId: string): Promise<void> {
    if (!(await this.waitForProjector(scope.project_id, ERASE_WAIT_MS))) {
      throw new AppError("unavailable", "the log query store is still copying recent logs; retry the delete (the patient is already deleted and its logs no longer readable elsewhere)");
    }
    await this.deleteRows("AND patient_id = {patient:String}", scope, { patient: patientId }, "the patient's logs could not be erased from the log query store; retry the delete");
  }

  /** Deletes the scope's rows, all or one patient's (its id a bound parameter); a failure is a 503 with `failure` as its message. */
  private async deleteRows(and: "" | "AND patient_id = {patient:String}", scope: { organization_id: string; project_id: string }, params: Record<string, string>, failure: string): Promise<void> {
    const q: QueryRequest = {
      command: true,
      sql: `DELETE FROM ${this.db}.logs WHERE organization_id = {org:String} AND project_id = {project:String} ${and}`,
      params: { org: scope.organization_id, project: scope.project_id, ...params },
    };
    try {
      await this.send(q, ERASE_WAIT_MS);
    } catch (err) {
      throw new AppError("unavailable", failure, [], { cause: err });
    }
  }

  /**
   * Waits (up to 30 s) until the projector has copied every log accepted in the project,
   * else a 503 saying to retry. A project deletion runs it before it purges the logs at
   * their source: a copy still on its way would land after the rows are deleted, and one
   * whose source is purged before it is copied would hold the projector short of the
   * project's last sequence for good.
   */
  async awaitCopied(projectId: string): Promise<void> {
    if (!(await this.waitForProjector(projectId, ERASE_WAIT_MS))) {
      throw new AppError("unavailable", "the log query store is still copying this project's recent logs; send the DELETE again shortly");
    }
  }

  /** Erases a project's rows from the query store (its permanent deletion; see awaitCopied). */
  async eraseProject(scope: { organization_id: string; project_id: string }): Promise<void> {
    await this.deleteRows("", scope, {}, "the project's logs could not be erased from the log query store; send the DELETE again");
  }

  /**
   * Runs a query. `patients` are those whose data the answer carries (each row's, each
   * group's), for the request's audit entry: the answer itself need not name them.
   */
  async run(body: unknown, scope: CompileScope): Promise<{ answer: QueryAnswer; current: boolean; patients: AuditedPatients }> {
    const q = compiled(body, scope);
    const current = await this.waitForProjector(scope.project_id);
    if (q.kind === "count") {
      return { answer: { count: countOf(await this.exec(q.sql, q.params)) }, current, patients: { ids: [], omitted: 0 } };
    }
    const [raw, total] = await Promise.all([
      this.exec(q.sql, q.params),
      q.countSql ? this.exec(q.countSql, q.countParams ?? q.params).then(countOf) : Promise.resolve(null),
    ]);
    const { rows, has_more } = pageRows(q, raw);
    if (q.single && rows.length !== 1) {
      throw new AppError("validation", `single expected exactly one row, got ${rows.length === 0 ? "none" : "more than one"}`, [
        { type: "single_row", message: "exactly one row required", field: "single", location: ["body", "single"], input_value: true },
      ]);
    }
    if (q.maybeSingle && rows.length > 1) {
      throw new AppError("validation", "maybe_single expected at most one row, got more than one", [
        { type: "single_row", message: "at most one row allowed", field: "maybe_single", location: ["body", "maybe_single"], input_value: true },
      ]);
    }
    return {
      answer: {
        count: rows.length,
        rows,
        organization_id: scope.organization_id,
        patient_id: scope.patient_id ?? null,
        total_count: total,
        has_more: q.single || q.maybeSingle ? false : has_more,
      },
      current,
      patients: auditedPatients(q, raw),
    };
  }
}

/**
 * The scope a caller's project-wide query runs in: its organization and project, and a
 * patient token's own patient only. A patient token naming anyone else in `patient_ids`
 * is "not found", as on every other route it reaches, so existence does not leak; so is
 * its own patient once deleted (`authorize`: the state routes' check), whose logs stay
 * in the project's queries for keys but no longer reach the patient's own token.
 */
export async function callerQueryScope(
  principal: Principal,
  body: unknown,
  authorize: (principal: Principal, patientId: string) => Promise<unknown>,
): Promise<CompileScope> {
  const { organization_id, project_id, patient_id } = principal;
  if (patient_id === undefined) return { organization_id, project_id };
  const named = body !== null && typeof body === "object" ? (body as { patient_ids?: unknown }).patient_ids : undefined;
  if (Array.isArray(named)) {
    const other = named.findIndex((id) => id !== patient_id);
    if (other >= 0) throw notFound("patient", String(named[other]));
  }
  await authorize(principal, patient_id);
  return { organization_id, project_id, patient_id };
}

/** The compiled query; a body the compiler refuses is the spec's 422 with its located details. */
function compiled(body: unknown, scope: CompileScope): CompiledQuery {
  try {
    return compileLogQuery(body, scope, DEFAULT_LIMITS);
  } catch (err) {
    if (isQueryValidationError(err)) throw new AppError("validation", err.message, err.details, { cause: err });
    throw err;
  }
}
