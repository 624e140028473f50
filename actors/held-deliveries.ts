/** A delivery JetStream waits on: `working()` restarts its ack wait. */
export interface Holdable {
  working(): void;
}

/**
 * Deliveries the state engine holds and has not acknowledged yet, kept from their ack
 * wait. A message waits in its patient's mailbox until the patient has a place and its
 * actor has saved it; under a deep backlog on a slow machine that can outlast the
 * durable's ack wait, and JetStream would then deliver it again: the copy comes marked
 * redelivered, which makes its patient replay its whole history from the stream (a copy
 * may have overtaken a later log), work that slows the engine further. So every
 * `periodMs` each delivery held at least that long is told to JetStream as still in
 * progress (an ack with `+WPI`), which restarts its ack wait. The period is a third of
 * the ack wait, so a held message is renewed at least twice before it would come again.
 *
 * Renewal stops once a delivery has been held `maxHoldMs`: one still held then was lost
 * on its way to an ack (a bug), and JetStream's redelivery is what recovers it.
 */
export class HeldDeliveries {
  /** In order of each one's last renewal (or hold): the sweep stops at the first one not due. */
  private readonly since = new Map<Holdable, { first: number; last: number }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly periodMs: number,
    private readonly maxHoldMs: number = periodMs * 30,
    private readonly now: () => number = Date.now,
  ) {}

  hold(d: Holdable): void {
    const at = this.now();
    this.since.set(d, { first: at, last: at });
    if (!this.timer) {
      this.timer = setInterval(() => this.sweep(), this.periodMs);
      this.timer.unref();
    }
  }

  release(d: Holdable): void {
    this.since.delete(d);
  }

  get size(): number {
    return this.since.size;
  }

  /** Renews every delivery held at least a period since its last renewal; returns how many it renewed. */
  sweep(): number {
    const now = this.now();
    const due: [Holdable, number][] = [];
    for (const [d, at] of this.since) {
      if (now - at.last < this.periodMs) break;
      due.push([d, at.first]);
    }
    let renewed = 0;
    for (const [d, first] of due) {
      this.since.delete(d);
      if (now - first >= this.maxHoldMs) continue;
      // Back at the end: the map stays ordered by when each was last renewed.
      this.since.set(d, { first, last: now });
      d.working();
      renewed++;
    }
    return renewed;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.since.clear();
  }
}
