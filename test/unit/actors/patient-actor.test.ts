import { describe, expect, it } from "vitest";
import { createActor, fromPromise, waitFor, type AnyActorRef } from "xstate";
import { patientActorMachine, type Delivery, type DrainResult } from "../../../actors/patient-actor.js";
import { Mailbox } from "../../../actors/mailbox.js";
import { emptyStored } from "../../../actors/apply-logs.js";
import type { ModuleKey } from "../../../readmodels/module.js";
import type { StoredPatientState } from "../../../actors/state-store.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const delivery = (seq: number, acked: number[]): Delivery => ({ seq, logs: [], redelivered: false, ack: () => acked.push(seq), nak: () => undefined });

/** The machine with fake side effects: what it processed and rendered, and a gate that holds renders. */
function harness(opts: { idle: number; debounce: number; renderWait?: number }) {
  const mailbox = new Mailbox();
  const acked: number[] = [];
  const rendered: number[] = [];
  /** Times the actor parked itself to wait for the engine, and left before IDLE came. */
  const parks = { parked: 0, left: 0 };
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
    },
    actors: {
      load: fromPromise(async () => ({ stored: emptyStored("pat_1", "UTC", "org", "prj"), changed: [] as ModuleKey[] })),
      process: fromPromise<DrainResult, { stored: StoredPatientState; mailbox: Mailbox }>(async ({ input }) => {
        let stored = input.stored;
        for (const d of input.mailbox.take()) {
          d.ack();
          stored = { ...stored, applied_seq: d.seq };
        }
        return { stored, changed: ["symptoms"] as ModuleKey[] };
      }),
      renderViews: fromPromise<void, { stored: StoredPatientState; modules: ModuleKey[] }>(async ({ input }) => {
        rendered.push(input.stored.applied_seq);
      }),
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
  return { actor, mailbox, acked, rendered, parks, send, openGate };
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
});
