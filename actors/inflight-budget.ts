/**
 * Bytes of delivered messages the state engine holds and has not acknowledged yet. The
 * consumer reads only while they stay under the limit: every message it reads is parsed
 * into a patient's mailbox and stays there until that patient's actor has saved it, so
 * without a bound a backlog (the service starting after an outage, a job's replay
 * outrunning the engine) would be read into memory whole, up to the consumer's
 * max_ack_pending, and wait there longer than the ack wait.
 */
export class InflightBudget {
  private used = 0;
  private peak = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  take(bytes: number): void {
    this.used += bytes;
    if (this.used > this.peak) this.peak = this.used;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
    if (this.used < this.limit && this.waiters.length > 0) this.wakeAll();
  }

  /** Resolves once the bytes held are under the limit (at once if they are). */
  room(): Promise<void> {
    if (this.used < this.limit) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Lets every waiter go, room or not (the engine is stopping). */
  release(): void {
    this.wakeAll();
  }

  stats(): { bytes: number; peak_bytes: number; limit_bytes: number } {
    return { bytes: this.used, peak_bytes: this.peak, limit_bytes: this.limit };
  }

  private wakeAll(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const go of w) go();
  }
}
