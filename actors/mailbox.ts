import type { Delivery } from "./patient-actor.js";

/**
 * A patient's pending deliveries, outside the actor's context: the consumer appends in
 * stream order and the actor drains everything at once, so a burst of messages costs
 * one pass through the machine, not one transition each.
 */
export class Mailbox {
  private items: Delivery[] = [];

  push(d: Delivery): void {
    this.items.push(d);
  }

  size(): number {
    return this.items.length;
  }

  /** Everything waiting, in arrival order; the mailbox is empty afterwards. */
  take(): Delivery[] {
    const out = this.items;
    this.items = [];
    return out;
  }

  /** Lowest stream sequence waiting (null when empty). */
  minSeq(): number | null {
    let min: number | null = null;
    for (const d of this.items) if (min === null || d.seq < min) min = d.seq;
    return min;
  }

  /** Hands everything back to JetStream for redelivery (the actor failed). */
  failAll(): void {
    for (const d of this.take()) d.nak();
  }
}
