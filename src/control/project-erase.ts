import { durablesOf } from "../../infra/nats/durable-consumer.js";
import { deleteKeys } from "../../infra/redis/connection.js";
import { AppError, notFound } from "../errors.js";
import type { Topology } from "../../infra/nats/topology.js";
import type { Redis } from "../../infra/redis/connection.js";
import type { PatientStateStore } from "../../infra/redis/state-store.js";
import type { Config } from "../config.js";
import type { IngestionService } from "../ingestion/service.js";
import type { LogQueryService } from "../query/log-query-service.js";
import type { ApiKeyStore } from "./api-keys.js";
import type { PatientStore } from "./patients.js";
import type { Project, ProjectStore } from "./projects.js";

/** Every store a project's data is in. */
interface EraseDeps {
  config: Config;
  topology: Topology;
  redis: Redis;
  projects: ProjectStore;
  apiKeys: ApiKeyStore;
  patients: PatientStore;
  stateStore: PatientStateStore;
  logQuery: LogQueryService;
  ingestion: IngestionService;
}

/** Longest the deletion waits for the state engine to have saved every log of the project. */
const ENGINE_WAIT_MS = 30_000;

/** Patients whose Redis keys are erased together. */
const ERASE_AT_ONCE = 256;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Redis keys of a project that are not a patient's: every one whose hash tag starts
 * with the project id (`acc:{prj}`, the idempotency ledgers' `idem:{prj:shard}` and
 * `logid:{prj.day:shard}`, their sequence keys). A per-project Redis key follows that
 * rule to be erased with its project. Patients' keys (`{pat_...}`) go per patient.
 */
const projectKeyPattern = (ns: string, project: string) => `${ns}:*{${project}[}:.]*`;

/**
 * Permanent deletion of a deprecated, non-default project: all its data, everywhere.
 *
 * Each step can be run again, and the project record goes last, so a deletion cut short
 * (a crash, a backend down: a 503) is finished by sending the DELETE again. Steps:
 *  1. its ingestion jobs end: cancelled while they can be, else the deletion waits (409);
 *  2. the record is marked (a restore is refused from here on);
 *  3. its project-bound API keys are revoked;
 *  4. the state engine and the ClickHouse projector are waited for (bounded, else 503),
 *     so nothing of the project is still on its way into Redis or ClickHouse;
 *  5. JetStream: its log subjects, idempotency ledgers, device feed and dead letters
 *     (topology's projectSubjects), and each job's staging;
 *  6. ClickHouse: its rows;
 *  7. Redis: each patient's state, audit and views, then the project's own keys;
 *  8. KV and object store: job records and keys, files, upload URLs, patients and their
 *     identifier claims;
 *  9. the record and its slug claims (the slug is free again).
 * Kept: the audit stream (append-only: who did what, ids only), and revoked key records.
 */
export async function eraseProject(s: EraseDeps, p: Project): Promise<void> {
  const { names, jsm } = s.topology;
  const scope = { organization_id: p.organization_id, project_id: p.id };
  const jobs = await s.ingestion.stopProjectJobs(p.id);
  await mark(s, p);
  const now = new Date().toISOString();
  for (const k of await s.apiKeys.list(p.organization_id)) {
    if (k.project_id === p.id && !k.revoked_at) await s.apiKeys.revoke(k.id, now);
  }
  await awaitEngine(s, p.id);
  await s.logQuery.awaitCopied(p.id);
  for (const { stream, filter } of names.projectSubjects(p.organization_id, p.id)) await jsm.streams.purge(stream, { filter });
  for (const j of jobs) await jsm.streams.purge(names.stagingStream, { filter: names.stagingSubjectsOfJob(j.job_id) });
  await s.logQuery.eraseProject(scope);
  const patients = await s.patients.list(p.id);
  // Many at a time: the client pipelines them, a project may hold a great many patients.
  for (let i = 0; i < patients.length; i += ERASE_AT_ONCE) await Promise.all(patients.slice(i, i + ERASE_AT_ONCE).map((pid) => s.stateStore.erase(p.id, pid)));
  await deleteKeys(s.redis, projectKeyPattern(s.config.namespace, p.id));
  await s.ingestion.eraseProject(p.id);
  await s.patients.eraseProject(p.id);
  await s.projects.remove(p);
}

/** Marks the deletion on the record, unless a restore came first (then 409). */
async function mark(s: EraseDeps, p: Project): Promise<void> {
  const at = new Date().toISOString();
  const marked = await s.projects.modify(p.id, (cur) => (cur.deleting_since !== undefined || cur.status !== "deprecated" ? undefined : { ...cur, deleting_since: at }));
  if (!marked) throw notFound("project", p.slug);
  if (marked.status !== "deprecated") {
    throw new AppError("conflict", `project ${p.slug} was restored meanwhile: deprecate it again before deleting it`, [{ type: "project_not_deprecated", message: "only a deprecated project can be deleted" }]);
  }
}

/**
 * Waits until the state engine has acknowledged every log accepted in the project: it
 * acknowledges a log once the state holding it is saved, so no save of this project's
 * patients can land after their keys are erased (a view rendered later is not kept
 * without its state: PatientStateStore.saveViews).
 */
/** Whether every partition's durable has acknowledged all it holds up to stream sequence `seq`. */
async function appliedThrough(jsm: EraseDeps["topology"]["jsm"], names: EraseDeps["topology"]["names"], seq: number): Promise<boolean> {
  for (let p = 0; p < names.partitions; p++) {
    const durables = await durablesOf(jsm, names.logsStream, names.stateConsumers(p)).catch(() => []);
    if (durables.length === 0) return false;
    // A partition with nothing left to apply is through any sequence.
    for (const info of durables) if (info.ack_floor.stream_seq < seq && (info.num_pending > 0 || info.num_ack_pending > 0)) return false;
  }
  return true;
}

async function awaitEngine(s: EraseDeps, project: string): Promise<void> {
  const target = await s.stateStore.projectAccepted(project);
  if (target === 0) return;
  const { names, jsm } = s.topology;
  const deadline = Date.now() + ENGINE_WAIT_MS;
  for (let delay = 5; ; delay = Math.min(delay * 2, 200)) {
    if (await appliedThrough(jsm, names, target)) return;
    if (Date.now() >= deadline) throw new AppError("unavailable", "the state engine is still applying this project's recent logs; send the DELETE again shortly");
    await sleep(delay);
  }
}
