import { assign, setup } from "xstate";
import type { PatientKey } from "../src/state/state-reader.js";
import type { ModuleKey } from "../readmodels/module.js";
import type { StoredPatientState } from "../infra/redis/state-store.js";
import type { Mailbox } from "./mailbox.js";

/** A JetStream message on its way into a patient's state; ack once the state holding it is saved. */
export interface Delivery {
  seq: number;
  logs: import("../readmodels/log-record.js").LogRecord[];
  /** JetStream delivered it before: the stream order of this patient's messages may be broken. */
  redelivered: boolean;
  ack(): void;
  nak(): void;
}

export type PatientActorInput = PatientKey;

export interface LoadInput extends PatientActorInput {
  /** Lowest stream sequence waiting to be applied: tells a new patient from a lost state. */
  firstQueuedSeq: number | null;
}

/** What draining the mailbox gave: the new state and the modules that changed. */
export interface DrainResult {
  stored: StoredPatientState;
  changed: Iterable<ModuleKey>;
}

export interface LoadOutput {
  stored: StoredPatientState;
  /** Modules rebuilt while loading (a replay): their views are stale. */
  changed: ModuleKey[];
}

interface Context extends PatientActorInput {
  stored: StoredPatientState | null;
  mailbox: Mailbox;
  dirty: ModuleKey[];
  /** Someone saw Redis without this patient's state: reload (and so rebuild) when free. */
  reload: boolean;
  /** Numbers the renders, so a render the actor left (WAKE) cannot end a later one early. */
  render: number;
}

/** What a new actor starts with: who it is, and the mailbox the consumer fills. */
export interface PatientActorStart extends PatientActorInput {
  mailbox: Mailbox;
}

/**
 * WAKE: the mailbox got deliveries. IDLE: the engine has caught up (see awaitIdle).
 * LOADED, PROCESSED, RENDERED and FAILED report the outcome of the work the actor's
 * entry actions started (see report).
 */
export type PatientActorEvent =
  | { type: "WAKE" }
  | { type: "PASSIVATE" }
  | { type: "RELOAD" }
  | { type: "IDLE" }
  | { type: "LOADED"; output: LoadOutput }
  | { type: "PROCESSED"; output: DrainResult }
  | { type: "RENDERED"; render: number }
  | { type: "FAILED"; error: unknown };

/** Who a work action reports back to: the actor that started it. */
export interface PatientActorSelf {
  send(event: PatientActorEvent): void;
  getSnapshot(): { status: string };
}

/**
 * Runs one piece of an actor's work and reports its outcome as an event, unless the
 * actor has stopped meanwhile (passivated, or the engine stopped): nothing listens then.
 */
export function report<T>(self: PatientActorSelf, work: () => Promise<T>, done: (output: T) => PatientActorEvent): void {
  const send = (e: PatientActorEvent) => {
    if (self.getSnapshot().status === "active") self.send(e);
  };
  // A work function that throws before its first await fails like one that rejects.
  Promise.resolve()
    .then(work)
    .then((out) => send(done(out)), (error: unknown) => send({ type: "FAILED", error }));
}

const union = (a: readonly ModuleKey[], b: Iterable<ModuleKey>) => [...new Set([...a, ...b])];

const unprovided = (name: string) => () => {
  throw new Error(`${name} is provided by the state engine`);
};

/**
 * One patient's actor: it applies that patient's deliveries one batch at a time, in
 * stream order, so a patient's state has a single writer. Every side effect is a named
 * action provided by the wiring (actors/state-engine.ts), so tests can swap them.
 *
 * loading → (processing ⇄ settling → waiting → rendering) → idle → passivated.
 * Deliveries wait in a mailbox the consumer fills; WAKE says it is no longer empty.
 * Views are regenerated once deliveries stop for `viewDebounce` and the engine has
 * nothing else to apply: `waiting` parks the actor with the engine (awaitIdle), which
 * sends IDLE when it has caught up; new deliveries take the actor out of waiting or
 * rendering first. An idle actor passivates after `idle` and its memory goes; Redis and
 * JetStream hold everything it knew.
 *
 * Loading, processing and rendering start their work in an entry action that reports
 * back with an event (report), rather than invoking a promise actor: an invoked child
 * costs about 30 us to create, start and stop on this VM, and under load every delivery
 * goes through one or more of these states.
 */
export const patientActorMachine = setup({
  types: { context: {} as Context, events: {} as PatientActorEvent, input: {} as PatientActorStart },
  actions: {
    /** Loads the state (from Redis, or by replay): reports LOADED with a LoadOutput, or FAILED. */
    load: unprovided("load"),
    /** Drains the mailbox (again while it refills), saves, acks; on failure naks what it took. Reports PROCESSED or FAILED. */
    process: unprovided("process"),
    /** Renders and stores the views that read `context.dirty`; reports RENDERED with `context.render`, failed or not. */
    render: unprovided("render"),
    failAll: ({ context }) => context.mailbox.failAll(),
    /** Says why loading or processing failed (provided by the state engine, which logs it). */
    logFailure: (_: { context: Context; event: PatientActorEvent }) => undefined,
    /** Asks the engine for IDLE once it has nothing left to apply (provided by the state engine). */
    awaitIdle: () => undefined,
    /** Withdraws that request. */
    leaveIdle: () => undefined,
  },
  delays: {
    /** @default 60_000 (1 min) */
    idle: 60_000,
    /** @default 250 ms */
    viewDebounce: 250,
    /** @default 5_000 ms */
    renderWait: 5_000,
  },
  guards: {
    hasQueue: ({ context }) => context.mailbox.size() > 0,
    hasDirty: ({ context }) => context.dirty.length > 0,
    /** A render's report is the current render's, not one the actor left (WAKE) before it finished. */
    currentRender: ({ context, event }) => event.type === "RENDERED" && event.render === context.render,
  },
}).createMachine({
  id: "patient",
  context: ({ input }) => ({
    patient_id: input.patient_id,
    organization_id: input.organization_id,
    project_id: input.project_id,
    stored: null,
    mailbox: input.mailbox,
    dirty: [],
    reload: false,
    render: 0,
  }),
  initial: "loading",
  on: { RELOAD: { actions: assign({ reload: () => true }) } },
  states: {
    loading: {
      entry: [assign({ reload: () => false }), "load"],
      on: {
        // A reload keeps the views still to render from before it (RELOAD in settling).
        LOADED: {
          target: "deciding",
          actions: assign({ stored: ({ event }) => event.output.stored, dirty: ({ context, event }) => union(context.dirty, event.output.changed) }),
        },
        FAILED: { target: "failed", actions: "logFailure" },
      },
    },
    deciding: {
      always: [
        { guard: ({ context }) => context.reload, target: "loading" },
        { guard: "hasQueue", target: "processing" },
        { guard: "hasDirty", target: "settling" },
        { target: "idle" },
      ],
    },
    processing: {
      entry: "process",
      on: {
        PROCESSED: {
          target: "deciding",
          actions: assign({
            stored: ({ event }) => event.output.stored,
            dirty: ({ context, event }) => union(context.dirty, event.output.changed),
          }),
        },
        FAILED: { target: "failed", actions: "logFailure" },
      },
    },
    settling: {
      after: { viewDebounce: { target: "waiting" } },
      // PASSIVATE (memory pressure): the engine renders the views left dirty from Redis later.
      on: { WAKE: { target: "processing" }, RELOAD: { target: "loading" }, PASSIVATE: { target: "passivated" } },
    },
    waiting: {
      // Renders wait until the engine has caught up (see idle-gate.ts): new logs come
      // first, and the views stay dirty for the next settle. A patient whose logs stopped
      // for `renderWait` while the engine stayed busy passivates: holding its state only to
      // render later would keep every patient of a long backlog (a job's replay) in memory.
      // The engine renders its views from Redis once it catches up (or a read does first).
      // Waiting starts nothing: under load every delivery takes thousands of actors out
      // of this state.
      entry: "awaitIdle",
      exit: "leaveIdle",
      after: { renderWait: { target: "passivated" } },
      on: { IDLE: { target: "rendering" }, WAKE: { target: "processing" }, RELOAD: { target: "loading" }, PASSIVATE: { target: "passivated" } },
    },
    rendering: {
      entry: [assign({ render: ({ context }) => context.render + 1 }), "render"],
      // A failed render is retried by the next change; reads fall back to rendering on demand.
      on: {
        RENDERED: { guard: "currentRender", target: "deciding", actions: assign({ dirty: () => [] }) },
        WAKE: { target: "processing" },
        RELOAD: { target: "loading" },
        PASSIVATE: { target: "passivated" },
      },
      // A render stuck on its save (Redis unreachable) must not pin the actor in memory.
      after: { idle: { target: "passivated" } },
    },
    idle: {
      after: { idle: { target: "passivated" } },
      // RELOAD: Redis may have lost what this actor holds; loading checks and rebuilds.
      on: { WAKE: { target: "processing" }, PASSIVATE: { target: "passivated" }, RELOAD: { target: "loading" } },
    },
    failed: { entry: "failAll", type: "final" },
    passivated: { type: "final" },
  },
});
