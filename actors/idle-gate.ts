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
  private readonly waiters = new Map<object, () => void>();
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

  /**
   * Calls `go` once nothing is pending, unless `unpark(key)` comes first. A parked actor
   * costs one map entry: under load every delivery moves thousands of actors in and out.
   */
  park(key: object, go: () => void): void {
    this.waiters.set(key, go);
    this.schedule();
  }

  unpark(key: object): void {
    this.waiters.delete(key);
  }

  private schedule(): void {
    if (this.scheduled || this.waiters.size === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.pending > 0) return; // leave() schedules again when the engine catches up
      const next = this.waiters.entries().next();
      if (!next.done) {
        this.waiters.delete(next.value[0]);
        next.value[1]();
      }
      this.schedule();
    });
  }
}
