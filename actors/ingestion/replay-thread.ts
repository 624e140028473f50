import { Worker } from "node:worker_threads";
import type { Config } from "../../src/config.js";
import type { LogOutcomes } from "../../infra/metrics/process-metrics.js";
import type { ChunkOutcome, ReplayWriteInput } from "./replay-writes.js";
import { throwIfAborted, type ReplayWrites } from "./stage-deps.js";

export type ToReplayWorker =
  | { type: "write"; id: number; input: ReplayWriteInput; hooked: boolean }
  | { type: "abort"; id: number }
  | { type: "continue"; id: number }
  | { type: "close" };

export type FromReplayWorker =
  | { type: "ready" }
  | { type: "init-failed"; message: string }
  | { type: "chunk"; id: number; outcome: ChunkOutcome }
  | { type: "before-chunk"; id: number }
  | { type: "done"; id: number }
  | { type: "failed"; id: number; message: string };

interface Task {
  onChunk: (outcome: ChunkOutcome) => void;
  beforeChunk?: () => Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * The worker's entry. Compiled (dist/), it is the worker module itself. Run as TypeScript
 * (the tests), a small entry registers tsx in the worker first: Node 20 does not apply
 * loader hooks given by `--import` in a worker's execArgv to the worker's own entry file.
 */
const WORKER_ENTRY = import.meta.url.endsWith(".ts") ? new URL("./replay-worker-boot.mjs", import.meta.url) : new URL("./replay-worker.js", import.meta.url);

/**
 * REPLAYING's writes on a worker thread (replay-worker.ts). A job's replay is bound by the
 * one JavaScript thread it shares with the state engine, the ClickHouse projector and
 * HTTP; on this thread parsing the staged lines and the write path (validation,
 * idempotency claims, publishing) cost about a quarter of the replay's time. The worker
 * writes through its own connections to the same stream and ledger, exactly as
 * POST /v1/logs/batch would, and reports each chunk's outcome back; the job's record,
 * its cursor and everything else of the stage stay here.
 *
 * Started on the first write, kept while the service runs. If it dies, the writes in
 * flight fail as a lost NATS connection would fail them on the job's thread (the stage
 * writes their buckets again), and the next write starts another.
 */
export class ReplayThread implements ReplayWrites {
  private worker: Promise<Worker> | null = null;
  private readonly tasks = new Map<number, Task>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly config: Config,
    /**
     * Counted here from each chunk's outcome, as the thread's own writer counts nothing:
     * the process's metrics are on this thread.
     */
    private readonly outcomes?: LogOutcomes,
  ) {}

  async write(input: ReplayWriteInput, signal: AbortSignal, onChunk: (outcome: ChunkOutcome) => void, beforeChunk?: () => Promise<void>): Promise<void> {
    if (this.closed) throw new Error("replay thread closed");
    const worker = await (this.worker ??= this.start());
    throwIfAborted(signal);
    const id = this.nextId++;
    const post = (m: ToReplayWorker) => worker.postMessage(m);
    const onAbort = () => post({ type: "abort", id });
    return new Promise<void>((resolve, reject) => {
      this.tasks.set(id, { onChunk, beforeChunk, resolve, reject });
      signal.addEventListener("abort", onAbort, { once: true });
      post({ type: "write", id, input, hooked: beforeChunk !== undefined });
    }).finally(() => {
      this.tasks.delete(id);
      signal.removeEventListener("abort", onAbort);
      // The worker's own abort error says only "job stopped"; the stage's reason is here.
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("job stopped");
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = await this.worker?.catch(() => null);
    if (!w) return;
    w.postMessage({ type: "close" } satisfies ToReplayWorker);
    // Its connections drain first; a worker stuck on them is stopped.
    const exited = new Promise((r) => w.once("exit", r));
    const timer = setTimeout(() => void w.terminate(), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private start(): Promise<Worker> {
    // No inherited execArgv: compiled JavaScript needs no loader, and the TypeScript entry registers tsx itself.
    const worker = new Worker(WORKER_ENTRY, {
      workerData: { config: this.config },
      execArgv: [],
      // V8 flags are the process's: without this the worker would take `npm start`'s 64 MB
      // semi-spaces too. 48 MB of young generation is V8's default of 16 MB semi-spaces.
      resourceLimits: { maxYoungGenerationSizeMb: 48 },
    });
    return new Promise<Worker>((resolve, reject) => {
      worker.on("message", (m: FromReplayWorker) => {
        if (m.type === "ready") resolve(worker);
        else if (m.type === "init-failed") reject(new Error(`replay thread could not start: ${m.message}`));
        else this.onMessage(worker, m);
      });
      worker.on("error", (err) => this.lost(err, reject));
      worker.on("exit", (code) => this.lost(new Error(`replay thread exited (${code})`), reject));
    });
  }

  private onMessage(worker: Worker, m: Exclude<FromReplayWorker, { type: "ready" | "init-failed" }>): void {
    const task = this.tasks.get(m.id);
    if (!task) return;
    if (m.type === "chunk") {
      this.count(m.outcome);
      task.onChunk(m.outcome);
    } else if (m.type === "done") task.resolve();
    else if (m.type === "failed") task.reject(new Error(m.message));
    else if (m.type === "before-chunk") {
      void (task.beforeChunk ?? (async () => undefined))().then(
        () => worker.postMessage({ type: "continue", id: m.id } satisfies ToReplayWorker),
        (err: unknown) => {
          task.reject(err instanceof Error ? err : new Error(String(err)));
          worker.postMessage({ type: "abort", id: m.id } satisfies ToReplayWorker);
          worker.postMessage({ type: "continue", id: m.id } satisfies ToReplayWorker);
        },
      );
    }
  }

  /**
   * What the writer in the thread stored (processed counts duplicates too) and refused. A
   * chunk JetStream could not store fails whole and is written again, so its storage
   * errors are not counted here, as they are by an in-thread writer.
   */
  private count(outcome: ChunkOutcome): void {
    if (!this.outcomes) return;
    this.outcomes.accepted("ingestion", outcome.processed - outcome.duplicates);
    for (const e of outcome.errors) this.outcomes.rejected("ingestion", e.code, 1);
  }

  /** The worker is gone: fail what it was writing, and start afresh on the next write. */
  private lost(err: Error, rejectStart: (err: Error) => void): void {
    this.worker = null;
    rejectStart(err);
    for (const t of this.tasks.values()) t.reject(err);
    this.tasks.clear();
  }
}
