import { randomUUID } from "node:crypto";
import { isRetryable, type PssError } from "./errors.js";
import { provedNotApplied } from "./http.js";
import type { BatchAnswer, LogInput } from "./types.js";

export interface LoggerOptions {
  /** Logs per request; reaching it starts a flush. @default 500 */
  maxBatch?: number;
  /** Flush whatever is queued this often. @default 1_000 ms */
  flushIntervalMs?: number;
  /** Queue size past which `log()` waits for a flush (backpressure). @default 50_000 */
  maxQueue?: number;
  /**
   * Give each log without an idempotency_key a random one, so the transport's retries
   * (and the logger's own re-sends) never store a log twice. @default true. With false, a
   * batch holding a log without a key is sent again only after failures that prove it
   * was not stored (429, refused connection); after a lost answer or a 5xx it goes to
   * onError, stored or not.
   */
  idempotencyKeys?: boolean;
  /**
   * Called with logs that will not be stored: per-log rejections (validation, unknown
   * patient) and, after `maxAttempts` failed sends, whole batches. Never throws into the app.
   */
  onError?: (e: LoggerFailure) => void;
  /** Sends of one batch (each already retried by the transport) before its logs are given up. @default 5 */
  maxAttempts?: number;
}

export interface LoggerFailure {
  logs: LogInput[];
  /** Per-log codes from the batch answer, or the request's error. */
  reason: { index: number; code: string; message: string }[] | PssError;
}

export interface LoggerStats {
  queued: number;
  sent: number;
  accepted: number;
  duplicates: number;
  failed: number;
}

/**
 * A buffered logger: `log()` queues, a background flush sends batches by size or by
 * interval. Failed sends that may succeed later (network, 429, 5xx) stay at the head of
 * the queue, so order per patient is kept. Call `close()` before exit.
 */
export class BufferedLogger {
  private queue: LogInput[] = [];
  private attempts = 0;
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  private readonly o: Required<Omit<LoggerOptions, "onError">> & Pick<LoggerOptions, "onError">;
  readonly stats: LoggerStats = { queued: 0, sent: 0, accepted: 0, duplicates: 0, failed: 0 };

  constructor(
    private readonly send: (logs: LogInput[]) => Promise<BatchAnswer>,
    options: LoggerOptions = {},
  ) {
    this.o = { maxBatch: 500, flushIntervalMs: 1_000, maxQueue: 50_000, idempotencyKeys: true, maxAttempts: 5, ...options };
    this.timer = setInterval(() => void this.flush(), this.o.flushIntervalMs);
    // The interval alone must not keep a finished program alive; close() drains the rest.
    this.timer.unref();
  }

  /** Queues a log. Await it for backpressure: it waits only when the queue is over maxQueue. */
  async log(entry: LogInput): Promise<void> {
    if (this.closed) throw new Error("logger is closed");
    const e = this.o.idempotencyKeys && entry.idempotency_key === undefined ? { ...entry, idempotency_key: randomUUID() } : entry;
    this.queue.push(e);
    this.stats.queued = this.queue.length;
    // A running drain loops until the queue is empty, so it takes these logs too.
    if (this.queue.length >= this.o.maxBatch && !this.flushing) void this.flush();
    if (this.queue.length > this.o.maxQueue) await this.flush();
  }

  /** Sends everything queued now (one flush at a time); resolves when done or given up for now. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.queue.length > 0 ? this.flush() : undefined));
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Stops the timer and sends what is queued, trying each batch up to maxAttempts. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    while (this.queue.length > 0) {
      await this.flush();
      // A retryable failure left the batch queued: wait before the next try, as the
      // interval would have (doubling from 250 ms, at most the flush interval).
      if (this.queue.length > 0 && this.attempts > 0) {
        await new Promise((r) => setTimeout(r, Math.min(this.o.flushIntervalMs, 250 * 2 ** (this.attempts - 1))));
      }
    }
    await this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.slice(0, this.o.maxBatch);
      try {
        const a = await this.send(batch);
        this.take(batch.length);
        this.stats.sent += batch.length;
        this.stats.accepted += a.accepted;
        this.stats.duplicates += a.duplicates;
        this.stats.failed += a.failed;
        if (a.errors.length > 0) this.report({ logs: a.errors.flatMap((x) => batch[x.index] ?? []), reason: a.errors.map(({ index, code, message }) => ({ index, code, message })) });
      } catch (err) {
        const e = err as PssError;
        // Retryable: keep the batch at the head and try again on the next flush, unless
        // the failed send may have stored logs that a second send would store again.
        const resendable = provedNotApplied(e) || batch.every((l) => typeof l.idempotency_key === "string" && l.idempotency_key !== "");
        if (isRetryable(e) && resendable && ++this.attempts < this.o.maxAttempts) return;
        this.take(batch.length);
        this.stats.failed += batch.length;
        this.report({ logs: batch, reason: e });
      }
    }
  }

  private take(n: number): void {
    this.queue.splice(0, n);
    this.attempts = 0;
    this.stats.queued = this.queue.length;
  }

  private report(f: LoggerFailure): void {
    try {
      this.o.onError?.(f);
    } catch {
      // A throwing callback must not break the flush loop.
    }
  }
}
