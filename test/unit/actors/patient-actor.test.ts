import { describe, expect, it } from "vitest";
import { createActor, waitFor, type AnyActorRef } from "xstate";
import { patientActorMachine, report, type Delivery } from "../../../actors/patient-actor.js";
import { Mailbox } from "../../../actors/mailbox.js";
import { emptyStored } from "../../../src/state/apply-logs.js";
import type { ModuleKey } from "../../../readmodels/module.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const delivery = (seq: number, acked: number[]): Delivery => ({ seq, logs: [], redelivered: false, ack: () => acked.push(seq), nak: () => undefined });

/** The machine with fake side effects: what it processed and rendered, and a gate that holds renders. */
function harness(opts: { idle: number; debounce: number; renderWait?: number; holdRenders?: boolean }) {
  const mailbox = new Mailbox();
  const acked: number[] = [];
  const rendered: number[] = [];
  /** Times the actor parked itself to wait for the engine, and left before IDLE came. */
  const parks = { parked: 0, left: 0 };
  /** With holdRenders: each render waits until the test calls its release. */
  const held: (() => void)[] = [];
  let open = false;
  let waiting: AnyActorRef | null = null;
  const machine = patientActorMachine.provide({
    delays: { idle: opts.idle, viewDebounce: opts.debounce, renderWait: opts.renderWait ?? opts.idle },
    // Like the engine's IdleGate: IDLE once the gate is open.
    actions: {
      awaitIdle: ({ self }) => {
        parks.parked++;
        waiting = self;
        if (open) setImmediate(() => waiting?.send({ type: "IDLE" }));
      },
      leaveIdle: () => {
        if (waiting) parks.left++;
        waiting = null;
      },
      load: ({ self }) => report(self, async () => ({ stored: emptyStored("pat_1", "UTC", "org", "prj"), changed: [] as ModuleKey[] }), (output) => ({ type: "LOADED", output })),
      process: ({ context, self }) =>
        report(
          self,
          async () => {
            let stored = context.stored!;
            for (const d of context.mailbox.take()) {
              d.ack();
              stored = { ...stored, applied_seq: d.seq };
            }
            return { stored, changed: ["symptoms"] as ModuleKey[] };
          },
          (output) => ({ type: "PROCESSED", output }),
        ),
      render: ({ context, self }) => {
        const render = context.render;
        const seq = context.stored!.applied_seq;
        const hold = opts.holdRenders ? new Promise<void>((r) => held.push(r)) : Promise.resolve();
        report(self, async () => hold.then(() => rendered.push(seq)), () => ({ type: "RENDERED", render }));
      },
    },
  });
  const actor = createActor(machine, { input: { patient_id: "pat_1", organization_id: "org", project_id: "prj", mailbox } });
  const send = (seq: number) => {
    mailbox.push(delivery(seq, acked));
    actor.send({ type: "WAKE" });
  };
  const openGate = () => {
    open = true;
    const w = waiting;
    waiting = null;
    w?.send({ type: "IDLE" });
  };
  return { actor, mailbox, acked, rendered, held, parks, send, openGate };
}

describe("the patient actor", () => {
  it("applies its mailbox, renders views once the logs pause and the gate opens, then idles and passivates", async () => {
    const h = harness({ idle: 60, debounce: 5 });
    h.mailbox.push(delivery(1, h.acked));
    h.actor.start();
    await waitFor(h.actor, (s) => s.matches("waiting"));
    expect(h.acked).toEqual([1]);
    expect(h.rendered).toEqual([]);
    h.openGate();
    await waitFor(h.actor, (s) => s.matches("idle"));
    expect(h.rendered).toEqual([1]);
    await waitFor(h.actor, (s) => s.status === "done");
    expect(h.actor.getSnapshot().value).toBe("passivated");
  });

  it("leaves a waiting render for new logs, and renders the newer state later", async () => {
    const h = harness({ idle: 1_000, debounce: 5 });
    h.mailbox.push(delivery(1, h.acked));
    h.actor.start();
    await waitFor(h.actor, (s) => s.matches("waiting"));
    h.send(2);
    await waitFor(h.actor, (s) => s.matches("waiting") && s.context.stored?.applied_seq === 2);
    expect(h.acked).toEqual([1, 2]);
    await sleep(10);
    // It parked twice and left the first wait without rendering the older state.
    expect(h.parks).toEqual({ parked: 2, left: 1 });
    expect(h.rendered).toEqual([]);
    h.openGate();
    await waitFor(h.actor, (s) => s.matches("idle"));
    expect(h.rendered).toEqual([2]);
    h.actor.stop();
  });

  it("passivates a patient whose render waited longer than renderWait (the engine stayed busy), long before the idle time", async () => {
    const h = harness({ idle: 60_000, debounce: 5, renderWait: 40 });
    h.mailbox.push(delivery(1, h.acked));
    h.actor.start();
    await waitFor(h.actor, (s) => s.status === "done", { timeout: 2_000 });
    expect(h.actor.getSnapshot().value).toBe("passivated");
    expect(h.rendered).toEqual([]);
    // What it leaves unrendered: the engine renders those views from Redis later.
    expect(h.actor.getSnapshot().context.dirty).toEqual(["symptoms"]);
  });

  it("keeps the views it still has to render through a reload (a reader found Redis without the patient)", async () => {
    const h = harness({ idle: 1_000, debounce: 50 });
    h.mailbox.push(delivery(1, h.acked));
    h.actor.start();
    await waitFor(h.actor, (s) => s.matches("settling"));
    h.actor.send({ type: "RELOAD" });
    await waitFor(h.actor, (s) => s.matches("waiting"));
    expect(h.actor.getSnapshot().context.dirty).toEqual(["symptoms"]);
    h.openGate();
    await waitFor(h.actor, (s) => s.matches("idle"));
    expect(h.rendered).toEqual([0]);
    h.actor.stop();
  });

  it("does not let a render it left for new logs end the render after it", async () => {
    const h = harness({ idle: 1_000, debounce: 5, holdRenders: true });
    h.mailbox.push(delivery(1, h.acked));
    h.actor.start();
    h.openGate();
    await waitFor(h.actor, (s) => s.matches("rendering"));
    h.send(2);
    await waitFor(h.actor, (s) => s.matches("rendering") && s.context.stored?.applied_seq === 2);
    expect(h.held).toHaveLength(2);
    h.held[0]!();
    await sleep(10);
    // The first render's report is stale: the second is still under way, its views dirty.
    expect(h.rendered).toEqual([1]);
    expect(h.actor.getSnapshot().value).toBe("rendering");
    expect(h.actor.getSnapshot().context.dirty).toEqual(["symptoms"]);
    h.held[1]!();
    await waitFor(h.actor, (s) => s.matches("idle"));
    expect(h.rendered).toEqual([1, 2]);
    h.actor.stop();
  });

  it("fails on a processing error, handing what it had not applied back for redelivery", async () => {
    const h = harness({ idle: 1_000, debounce: 5 });
    const naked: number[] = [];
    const failing = h.actor.logic.provide({
      actions: { process: ({ self }) => report(self, async () => Promise.reject(new Error("redis down")), (output) => ({ type: "PROCESSED", output })) },
    });
    const mailbox = new Mailbox();
    mailbox.push({ ...delivery(1, h.acked), nak: () => naked.push(1) });
    const actor = createActor(failing, { input: { patient_id: "pat_1", organization_id: "org", project_id: "prj", mailbox } }).start();
    await waitFor(actor, (s) => s.status === "done");
    expect(actor.getSnapshot().value).toBe("failed");
    expect(naked).toEqual([1]);
  });
});
