import type { JsMsg } from "@nats-io/jetstream";
import type { HeldDeliveries } from "./held-deliveries.js";
import type { IdleGate } from "./idle-gate.js";
import type { InflightBudget } from "./inflight-budget.js";
import type { Delivery } from "./patient-actor.js";

/** A JetStream message as a patient's delivery: a class, not closures, since one is made per message. */
export class JetStreamDelivery implements Delivery {
  readonly seq: number;
  readonly redelivered: boolean;
  /** Size as read from the stream, counted against the engine's in-flight budget. */
  readonly bytes: number;

  constructor(
    private readonly m: JsMsg,
    readonly logs: Delivery["logs"],
    private readonly idle: IdleGate,
    private readonly inflight: InflightBudget,
    private readonly pending: Map<number, number>,
    private readonly partition: number,
    private readonly held: HeldDeliveries,
  ) {
    this.seq = m.seq;
    this.redelivered = m.redelivered;
    this.bytes = m.data.length;
    held.hold(this);
  }

  /** Still being worked on: JetStream restarts the message's ack wait (see HeldDeliveries). */
  working(): void {
    this.m.working();
  }

  ack(): void {
    this.m.ack();
    this.done();
  }

  nak(): void {
    this.m.nak(1_000);
    this.done();
  }

  private done(): void {
    this.held.release(this);
    this.pending.set(this.partition, (this.pending.get(this.partition) ?? 1) - 1);
    this.idle.leave();
    this.inflight.give(this.bytes);
  }
}
