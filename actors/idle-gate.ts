/**
 * Lets background work (view rendering) run only while the engine has caught up: work
 * units (deliveries waiting to be applied) enter and leave; a waiter is let through
 * when none is pending, one per turn of the event loop, so applying logs always comes
 * first and a burst of waiting renders never blocks the loop for long. Under sustained
 * load renders wait; reads render what they need on demand meanwhile.
 */
export class IdleGate {
  private pending = 0;
  /** Insertion-ordered, and O(1) to leave: thousands of actors may wait at once. */
  private readonly waiters = new Set<() => void>();
  private scheduled = false;

  enter(n = 1): void {
    this.pending += n;
  }

  leave(n = 1): void {
    this.pending = Math.max(0, this.pending - n);
    if (this.pending === 0) this.schedule();
  }

  busy(): number {
    return this.pending;
  }

  /** Resolves once nothing is pending; rejects if `signal` aborts first. */
  wait(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const go = () => {
        signal?.removeEventListener("abort", stop);
        resolve();
      };
      const stop = () => {
        this.waiters.delete(go);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", stop, { once: true });
      this.waiters.add(go);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiters.size === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.pending > 0) return; // leave() schedules again when the engine catches up
      const next = this.waiters.values().next();
      if (!next.done) {
        this.waiters.delete(next.value);
        next.value();
      }
      this.schedule();
    });
  }
}
