import { createActor, type Actor, type SnapshotFrom } from "xstate";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import { isAppError, notFound } from "../../src/errors.js";
import { TERMINAL, type JobRecord } from "../../src/ingestion/job-record.js";
import { StaleJobWriteError, type JobStore, type StoredJob } from "../../src/ingestion/job-store.js";
import { AT_REVIEW_ONLY, cancelAgain, conflict, machineInput, recordTransition, type JobControl } from "./job-control.js";
import type { JobStateName } from "./job-machine.js";
import type { HeapGrowthCap } from "../../infra/heap-growth-cap.js";
import { HeldJob } from "./live-job.js";
import { DOCS, type StageDeps } from "./stage-deps.js";
import { removePatient } from "./review.js";
import { backfillStage } from "./stages/backfill.js";
import { provideJobMachine, type ProvidedJobMachine } from "./wiring.js";

export interface JobRunnerOptions {
  /** Time in AWAITING_CONFIRMATION before an automatic cancel. @default 604_800_000 (7 days) */
  confirmTimeoutMs: number;
  /** Jobs working at once; more wait in QUEUED. @default 2 */
  maxRunning: number;
  /** How often progress is saved while a job runs. @default 1_000 ms */
  saveEveryMs?: number;
  /** Tightens V8's heap growth while any job works (infra/heap-growth-cap.ts); none: left alone. */
  heapCap?: HeapGrowthCap;
  /**
   * The epoch of the `jobs` lease this runner works under: every save is fenced on it, so
   * a runner whose lease lapsed unnoticed cannot write over its successor. None: unfenced.
   */
  epoch?: number;
}

type JobActor = Actor<ProvidedJobMachine>;

/** Machine states that hold one of the `maxRunning` slots. */
const WORKING = new Set<JobStateName>(["VALIDATING", "INSERTING_PATIENTS", "INSERTING_LOGS", "REPLAYING", "BACKFILLING", "CANCELLING", "FAILING"]);
const CANCELLABLE = new Set<JobStateName>(["QUEUED", "VALIDATING", "INSERTING_PATIENTS", "INSERTING_LOGS", "AWAITING_CONFIRMATION"]);

/**
 * Runs ingestion jobs in the process that owns background work (role "all" or
 * "engine"; one per namespace, like the state engine). Each job is an xstate actor of
 * the job machine; its persisted snapshot is saved with the job record after every
 * transition and its progress about once a second, so on start every unfinished job is
 * restored where it stood (the interrupted stage's actor runs again and resumes from
 * the progress its record holds).
 */
export class JobRunner {
  private readonly held = new Map<string, { job: HeldJob; actor: JobActor | null; frozen?: unknown }>();
  private readonly machine: ProvidedJobMachine;
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private sub: Subscription | null = null;

  constructor(
    private readonly deps: StageDeps & { store: JobStore },
    private readonly options: JobRunnerOptions,
  ) {
    this.machine = provideJobMachine(deps, (jobId) => {
      const h = this.held.get(jobId);
      if (!h) throw new Error(`job ${jobId} is not held by this runner`);
      return h.job;
    });
  }

  async start(): Promise<void> {
    for (const stored of await this.deps.store.all()) {
      const r = stored.record;
      if (!TERMINAL.has(r.status)) this.hold(stored);
      else if (r.backfill_status === "running") this.runBackfill(this.holdFinished(stored), r.summary_types);
    }
    this.schedule();
    this.timer = setInterval(() => this.saveProgress(), this.options.saveEveryMs ?? 1_000);
  }

  /** Whether V8's heap growth is capped now for a working job (JobRunnerOptions.heapCap). */
  get heapCapped(): boolean {
    return this.options.heapCap?.active ?? false;
  }

  /** Serves control requests from api processes, which do not run jobs themselves. */
  serve(nc: NatsConnection, subject: string): void {
    this.sub = nc.subscribe(subject, {
      queue: "ingestion-runner",
      callback: (_err, msg) => {
        // Parsed inside the promise: a throw in a subscription callback ends the connection's
        // reader, so one message that is not JSON would silence this process's NATS for good.
        Promise.resolve()
          .then(() => this.control(msg.json<JobControl>()))
          .then(
            (job) => msg.respond(JSON.stringify({ ok: true, job })),
            (err) => msg.respond(JSON.stringify(isAppError(err) ? { ok: false, code: err.code, message: err.message, details: err.details } : { ok: false, code: "internal", message: String(err) })),
          );
      },
    });
  }

  /** Stops every job where it stands and saves it; once (a second call waits for the first). */
  stop(): Promise<void> {
    return (this.stopped ??= this.stopAll());
  }

  private async stopAll(): Promise<void> {
    this.stopping = true;
    this.options.heapCap?.set(false);
    this.sub?.unsubscribe();
    if (this.timer) clearInterval(this.timer);
    // Stopping an actor aborts its stage's signal; the work settles, then the last
    // progress is saved (the replay cursor is consistent at any moment).
    for (const h of this.held.values()) {
      // The snapshot as it stood: a stopped actor's own snapshot says "stopped" and would
      // restore as a job that never runs again.
      if (h.actor) h.frozen = h.actor.getPersistedSnapshot();
      h.actor?.stop();
      h.job.backfill?.abort();
    }
    const settle = Promise.all([...this.held.values()].map(({ job }) => job.settled()));
    await Promise.race([settle, new Promise((r) => setTimeout(r, 10_000))]);
    await Promise.all([...this.held.values()].map(({ job }) => job.save().catch(() => undefined)));
  }

  async control(c: JobControl): Promise<JobRecord | null> {
    if (c.op === "wake") {
      const stored = this.held.has(c.job_id) ? null : await this.deps.store.getStored(c.project_id, c.job_id);
      if (stored && !TERMINAL.has(stored.record.status)) this.hold(stored);
      this.schedule();
      return null;
    }
    let h = this.held.get(c.job_id);
    if (!h) {
      const stored = await this.deps.store.getStored(c.project_id, c.job_id);
      if (!stored) throw notFound("ingestion job", c.job_id);
      if (TERMINAL.has(stored.record.status) && c.op !== "retry_backfill") {
        if (c.op === "cancel" && stored.record.status === "cancelled") return cancelAgain(stored.record, c.rollback);
        throw conflict(stored.record, AT_REVIEW_ONLY[c.op] ?? "it has already ended");
      }
      h = TERMINAL.has(stored.record.status) ? { job: this.holdFinished(stored), actor: null } : this.hold(stored);
    }
    if (h.job.record.project_id !== c.project_id) throw notFound("ingestion job", c.job_id);
    const held = h;
    // One operation of a job at a time: a removal rewrites staging that a confirm's replay reads.
    const r = await held.job.exclusive(() => this.apply(held, c));
    if (c.op !== "cancel" || TERMINAL.has(r.status)) return r;
    // The cancel answers once its clean-up ended, waited for outside the turn: a confirm
    // meanwhile hears at once that the job is being cancelled.
    await this.until(held.job, 30_000);
    await held.job.save();
    return r;
  }

  private async apply(h: { job: HeldJob; actor: JobActor | null }, c: Exclude<JobControl, { op: "wake" }>): Promise<JobRecord> {
    const state = h.actor ? (h.actor.getSnapshot().value) : null;
    const r = h.job.record;
    const atReview = AT_REVIEW_ONLY[c.op];
    if (atReview !== undefined && state !== "AWAITING_CONFIRMATION") throw conflict(r, state === "CANCELLING" ? `it is being cancelled; ${atReview}` : atReview);
    if (c.op === "confirm") {
      h.actor!.send({ type: "CONFIRM", ...(c.summary_types ? { summary_types: c.summary_types } : {}) });
    } else if (c.op === "revise") {
      h.actor!.send({ type: "REVISE", ...(c.summary_types ? { summary_types: c.summary_types } : {}), ...(c.skip_backfill !== undefined ? { skip_backfill: c.skip_backfill } : {}) });
      // The state stays: no transition mirrors the change into the record.
      const ctx = h.actor!.getSnapshot().context;
      r.summary_types = ctx.summary_types;
      r.skip_backfill = ctx.skip_backfill === true;
      if (c.skip_backfill !== undefined) r.backfill_status = c.skip_backfill ? "skipped" : null;
    } else if (c.op === "remove_patient") {
      await removePatient(this.deps, h.job, c.patient_id);
    } else if (c.op === "cancel") {
      if (r.status === "cancelled") return cancelAgain(r, c.rollback);
      if (state === "CANCELLING") {
        // A cancel repeated while the first one cleans up (after a restart, say) waits for it as the first does.
        if (c.rollback !== undefined && c.rollback !== r.rollback_on_cancel) throw conflict(r, `it is being cancelled ${r.rollback_on_cancel ? "with" : "without"} rollback, which cannot be changed`);
      } else if (state === null || !CANCELLABLE.has(state)) {
        throw conflict(r, "a job can be cancelled until its replay into patient state starts");
      } else h.actor!.send({ type: "CANCEL", ...(c.rollback !== undefined ? { rollback: c.rollback } : {}) });
    } else {
      if (r.status !== "completed" && r.status !== "completed_with_errors") throw conflict(r, "only a completed job's view backfill can be retried");
      if (r.backfill_status === "running") throw conflict(r, "its view backfill is already running");
      this.runBackfill(h.job, c.summary_types ?? r.summary_types);
    }
    await h.job.save();
    return r;
  }

  /** Holds a finished job (for a retry of its backfill); it is let go when that ends. */
  private holdFinished(stored: StoredJob): HeldJob {
    const existing = this.held.get(stored.record.job_id);
    if (existing) return existing.job;
    const job = new HeldJob(stored.record, this.deps.store, () => stored.snapshot, (err) => this.saveFailed(stored.record.job_id, err), this.options.epoch);
    this.held.set(stored.record.job_id, { job, actor: null });
    return job;
  }

  private hold(stored: StoredJob): { job: HeldJob; actor: JobActor } {
    const existing = this.held.get(stored.record.job_id);
    if (existing?.actor) return existing as { job: HeldJob; actor: JobActor };
    let actor: JobActor | null = null;
    const entry: { job: HeldJob; actor: JobActor | null; frozen?: unknown } = { job: null as unknown as HeldJob, actor: null };
    const job = new HeldJob(stored.record, this.deps.store, () => entry.frozen ?? actor?.getPersistedSnapshot() ?? stored.snapshot, (err) => this.saveFailed(stored.record.job_id, err), this.options.epoch);
    entry.job = job;
    this.held.set(stored.record.job_id, entry);
    const options = stored.snapshot
      ? { snapshot: stored.snapshot as SnapshotFrom<ProvidedJobMachine>, input: machineInput(stored.record, this.options.confirmTimeoutMs) }
      : { input: machineInput(stored.record, this.options.confirmTimeoutMs) };
    actor = createActor(this.machine, options);
    entry.actor = actor;
    let last: string | null = null;
    actor.subscribe({
      next: (snap) => {
        const value = snap.value;
        if (value === last || this.stopping) return;
        last = value;
        this.onTransition(job, value, snap.context);
      },
      error: (err) => this.deps.log.error({ err, job_id: stored.record.job_id }, "ingestion job actor crashed"),
    });
    actor.start();
    // A job resumed from another tenure's snapshot is claimed at once: the fenced write
    // shuts out the runner that held it before, even while the job only waits.
    if (stored.snapshot && this.options.epoch !== undefined) void job.save();
    return { job, actor };
  }

  /**
   * A save refused because a later `jobs` tenure runs the job: this runner lost its lease
   * without knowing yet. The job is let go, unsaved (its stage's signal aborts), so this
   * runner neither writes nor works it further; the lease loss stops the rest.
   */
  private saveFailed(jobId: string, err: unknown): void {
    if (!(err instanceof StaleJobWriteError)) {
      this.deps.log.error({ err, job_id: jobId }, "saving an ingestion job failed");
      return;
    }
    this.deps.log.warn({ job_id: jobId, reason: err.message }, "ingestion job let go: a later jobs lease runs it");
    const h = this.held.get(jobId);
    if (!h) return;
    this.held.delete(jobId);
    h.actor?.stop();
    h.job.backfill?.abort();
  }

  /** Mirrors a transition into the record, saves it with the snapshot, frees slots. */
  private onTransition(job: HeldJob, value: JobStateName, ctx: SnapshotFrom<ProvidedJobMachine>["context"]): void {
    if (recordTransition(job.record, value, ctx, new Date())) void this.finish(job);
    void job.save();
    this.schedule();
  }

  /**
   * A finished job: its inline file and working documents go, except a completed job's
   * replay list (a few bytes per patient), which retry-backfill needs.
   */
  private async finish(job: HeldJob): Promise<void> {
    const r = job.record;
    await job.flushed().catch(() => undefined);
    if (r.source.inline) await this.deps.uploads.delete(r.source.object);
    if (r.source.rows) await this.deps.uploads.delete(r.source.rows.object);
    const { jsm, names } = this.deps.staging;
    const completed = r.status === "completed" || r.status === "completed_with_errors";
    const filters = completed ? [DOCS.rows, DOCS.targets, DOCS.existing, DOCS.typeCounts, DOCS.patients, DOCS.fhirLines].map((d) => names.stagingDocSubject(r.job_id, d)) : [names.stagingSubjectsOfJob(r.job_id)];
    for (const filter of filters) await jsm.streams.purge(names.stagingStream, { filter }).catch(() => undefined);
    this.held.delete(r.job_id);
  }

  private runBackfill(job: HeldJob, summaryTypes: string[] | null): void {
    const r = job.record;
    const abort = new AbortController();
    job.backfill = abort;
    r.backfill_status = "running";
    const input = { job_id: r.job_id, organization_id: r.organization_id, project_id: r.project_id, summary_types: summaryTypes };
    void job
      .track(backfillStage(this.deps, job, input, abort.signal))
      .catch((err: unknown) => this.deps.log.warn({ err, job_id: r.job_id }, "view backfill failed"))
      .finally(() => {
        job.backfill = null;
        if (!this.stopping) void this.finish(job);
      });
  }

  /** Starts queued jobs, oldest first, while fewer than maxRunning work. */
  private schedule(): void {
    if (this.stopping) return;
    const live = [...this.held.values()].flatMap(({ job, actor }) => (actor ? [{ job, actor, state: actor.getSnapshot().value }] : []));
    let working = live.filter((h) => WORKING.has(h.state)).length;
    const queued = live.filter((h) => h.state === "QUEUED").sort((a, b) => (a.job.record.created_at < b.job.record.created_at ? -1 : 1));
    for (const { actor } of queued) {
      if (working >= this.options.maxRunning) break;
      actor.send({ type: "START" });
      working++;
    }
    this.options.heapCap?.set(working > 0);
  }

  private saveProgress(): void {
    for (const { job } of this.held.values()) if (job.isDirty()) void job.save();
  }

  private async until(job: HeldJob, ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (!TERMINAL.has(job.record.status) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  }
}
