import type { JobRecord } from "../../src/ingestion/job-record.js";
import { refreshProgress } from "../../src/ingestion/job-record.js";
import type { JobStore } from "../../src/ingestion/job-store.js";
import type { LiveJob } from "./stage-deps.js";

/**
 * A job held by the runner: its record (updated in place by the stage actors), the
 * machine snapshot to persist with it, and an ordered chain of writes, so a slow KV
 * write never lets an older record overwrite a newer one.
 */
export class HeldJob implements LiveJob {
  private dirty = false;
  private chain: Promise<void> = Promise.resolve();
  private readonly work = new Set<Promise<unknown>>();
  private turn: Promise<unknown> = Promise.resolve();
  /** Set while a retry-backfill runs outside the (final) machine. */
  backfill: AbortController | null = null;

  constructor(
    readonly record: JobRecord,
    private readonly store: JobStore,
    /** The machine's persisted snapshot now (null before the machine exists). */
    private readonly snapshot: () => unknown,
    private readonly onError: (err: unknown) => void,
    /** The runner's `jobs` lease epoch: its writes are fenced on it (JobStore.put). */
    private readonly epoch?: number,
  ) {}

  touch(): void {
    this.dirty = true;
  }

  isDirty(): boolean {
    return this.dirty;
  }

  save(): Promise<void> {
    this.dirty = false;
    this.chain = this.chain.then(async () => {
      refreshProgress(this.record, Date.now());
      // A copy: the actors keep changing the record while the write is on its way.
      await this.store.put({ record: structuredClone(this.record), snapshot: this.snapshot() }, this.epoch);
    });
    const done = this.chain;
    this.chain = this.chain.catch((err) => this.onError(err));
    return done;
  }

  settled(): Promise<void> {
    return Promise.allSettled([...this.work]).then(() => undefined);
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.work.add(work);
    const forget = () => this.work.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Runs `fn` after every operation given here before it has settled, one at a time. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => undefined);
    return run;
  }

  /** The last write, settled (the runner's stop waits for it). */
  flushed(): Promise<void> {
    return this.chain;
  }
}
