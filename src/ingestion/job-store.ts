import { isKvConflict, KvConflictError, type JsonKv } from "../../infra/nats/json-kv.js";
import { digest } from "../control/hash.js";
import { AppError } from "../errors.js";
import { upgradeRecord, type JobRecord } from "./job-record.js";
import { wireStatus } from "./job-view.js";

/** A job as kept in KV: its record and the machine's persisted snapshot (null until it starts). */
export interface StoredJob {
  record: JobRecord;
  snapshot: unknown;
  /** The `jobs` lease epoch of the runner that wrote it last (absent: written before any runner held it). */
  epoch?: number;
}

/**
 * A runner's write refused: a runner of a later `jobs` lease tenure has written the job.
 * The writer lost its lease without knowing yet (a pause past the TTL) and must let the job go.
 */
export class StaleJobWriteError extends Error {
  override name = "StaleJobWriteError";
}

/** Who holds a job-level idempotency key. */
interface KeyClaim {
  job_id: string;
  claimed_at: number;
}

/** A claim whose job never appeared after this long was left by a crash mid-create. */
const ORPHAN_CLAIM_MS = 30_000;

/** Statuses after which the same idempotency key may start a new job (spec rule 3). */
const RETRYABLE = new Set(["failed", "cancelled"]);

/**
 * Ingestion jobs of every project, one KV entry each (`{project}.{job}`), and the
 * job-level idempotency keys (`{project}.{digest}`), claimed with compare-and-set so two
 * concurrent creations with one key give one job and one 409.
 */
export class JobStore {
  constructor(
    private readonly jobs: JsonKv<StoredJob>,
    private readonly keys: JsonKv<KeyClaim>,
  ) {}

  static key(project: string, jobId: string): string {
    return `${project}.${jobId}`;
  }

  async create(record: JobRecord): Promise<void> {
    const claimKey = record.idempotency_key === null ? null : `${record.project_id}.${digest(record.idempotency_key)}`;
    if (claimKey) await this.claim(record, claimKey);
    try {
      await this.jobs.create(JobStore.key(record.project_id, record.job_id), { record, snapshot: null });
    } catch (err) {
      if (claimKey) await this.keys.delete(claimKey).catch(() => undefined);
      throw err;
    }
  }

  private async claim(record: JobRecord, key: string): Promise<void> {
    const mine: KeyClaim = { job_id: record.job_id, claimed_at: Date.now() };
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await this.keys.create(key, mine);
        return;
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
      const cur = await this.keys.get(key);
      if (!cur) continue;
      const holder = await this.get(record.project_id, cur.value.job_id);
      const free = holder ? RETRYABLE.has(holder.status) : Date.now() - cur.value.claimed_at > ORPHAN_CLAIM_MS;
      if (!free) throw duplicate(record.idempotency_key!, cur.value.job_id, holder ? wireStatus(holder) : "queued");
      try {
        await this.keys.update(key, mine, cur.revision);
        return;
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
    throw new AppError("conflict", "another job with this idempotency_key is being created; retry");
  }

  async getStored(project: string, jobId: string): Promise<StoredJob | null> {
    if (!/^job_[0-9A-Za-z]{1,60}$/.test(jobId)) return null;
    return upgraded((await this.jobs.get(JobStore.key(project, jobId)))?.value ?? null);
  }

  async get(project: string, jobId: string): Promise<JobRecord | null> {
    return (await this.getStored(project, jobId))?.record ?? null;
  }

  /**
   * Writes the job. With the writer's `jobs` lease `epoch`, the write is fenced: refused
   * (StaleJobWriteError) when a later tenure's runner has written the job, so a runner
   * that lapsed unaware never sets a job back over what its successor did with it (its
   * stop saves every job it held, as they stood when it paused).
   */
  async put(job: StoredJob, epoch?: number): Promise<void> {
    const key = JobStore.key(job.record.project_id, job.record.job_id);
    if (epoch === undefined) {
      await this.jobs.put(key, job);
      return;
    }
    const mine = { ...job, epoch };
    for (let attempt = 0; attempt < 10; attempt++) {
      const cur = await this.jobs.get(key);
      if (cur && (cur.value.epoch ?? 0) > epoch) throw new StaleJobWriteError(`job ${job.record.job_id} is run by a later jobs lease (epoch ${cur.value.epoch} > ${epoch})`);
      try {
        if (cur) await this.jobs.update(key, mine, cur.revision);
        else await this.jobs.create(key, mine);
        return;
      } catch (err) {
        if (!isKvConflict(err)) throw err;
      }
    }
    throw new KvConflictError(key);
  }

  /** The project's jobs, newest first. */
  async list(project: string): Promise<JobRecord[]> {
    const keys = await this.jobs.keys(`${project}.*`);
    const all = await Promise.all(keys.map(async (k) => upgraded((await this.jobs.get(k))?.value ?? null)?.record ?? null));
    return all.filter((r): r is JobRecord => r !== null).sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  }

  /** Erases the project's job records and job-level idempotency keys (a deleted project's). */
  async eraseProject(project: string): Promise<void> {
    await this.jobs.purgeMatching(`${project}.*`);
    await this.keys.purgeMatching(`${project}.*`);
  }

  /** Every job of every project (the runner's restore at start). */
  async all(): Promise<StoredJob[]> {
    const keys = await this.jobs.keys();
    const all = await Promise.all(keys.map(async (k) => upgraded((await this.jobs.get(k))?.value ?? null)));
    return all.filter((j): j is StoredJob => j !== null);
  }
}

/** A stored job as this build reads it (a record of an earlier build lacks newer fields). */
function upgraded(j: StoredJob | null): StoredJob | null {
  if (j) upgradeRecord(j.record);
  return j;
}

function duplicate(key: string, jobId: string, status: string): AppError {
  const why = status === "completed" || status === "completed_with_errors" ? "already completed" : "is still in progress";
  return new AppError("conflict", `a job with idempotency_key "${key}" ${why} (job ${jobId}, status ${status})`, [
    { type: "duplicate_idempotency_key", message: `job ${jobId} holds this key`, job_id: jobId, job_status: status },
  ]);
}
