import type { StoredPatientState } from "../infra/redis/state-store.js";
import { viewsAffectedBy, type ViewType } from "../readmodels/views/index.js";
import type { IdleGate } from "./idle-gate.js";
import type { Mailbox } from "./mailbox.js";
import { patientActorMachine, report, type DrainResult, type LoadInput, type LoadOutput } from "./patient-actor.js";

/** The I/O a patient actor's entry actions start (the state engine's): each reports back with an event. */
export interface PatientActorWork {
  /** Deliveries not yet applied: an actor waits here before it renders its views. */
  idle: IdleGate;
  load(input: LoadInput, now: string): Promise<LoadOutput>;
  drain(stored: StoredPatientState, mailbox: Mailbox, now: () => string): Promise<DrainResult>;
  render(stored: StoredPatientState, types: readonly ViewType[]): Promise<void>;
  log: { warn(obj: unknown, msg?: string): void };
  now: () => string;
}

export interface PatientActorDelays {
  /** An actor with nothing to do for this long is passivated. */
  idleMs: number;
  /** Views are rendered once a patient's logs stop for this long. */
  viewDebounceMs: number;
  /** A patient waiting this long to render while the engine stays busy is passivated. */
  renderWaitMs: number;
}

/**
 * The one place where the patient actor (actors/patient-actor.ts) meets I/O: each named
 * action is bound to the work that does it, and each delay to its setting. Tests of the
 * machine provide their own.
 */
export function providePatientActor(work: PatientActorWork, delays: PatientActorDelays) {
  return patientActorMachine.provide({
    delays: { idle: delays.idleMs, viewDebounce: delays.viewDebounceMs, renderWait: delays.renderWaitMs },
    actions: {
      // The actor itself is the key: one entry per waiting patient, removed on leaving.
      awaitIdle: ({ self }) => work.idle.park(self, () => {
        if (self.getSnapshot().status === "active") self.send({ type: "IDLE" });
      }),
      leaveIdle: ({ self }) => work.idle.unpark(self),
      logFailure: ({ context, event }) => {
        if (event.type === "FAILED") work.log.warn({ err: event.error, patient_id: context.patient_id }, "patient actor failed; its deliveries come again and its next actor replays the patient");
      },
      load: ({ context: c, self }) =>
        report(self, () => work.load({ patient_id: c.patient_id, organization_id: c.organization_id, project_id: c.project_id, firstQueuedSeq: c.mailbox.minSeq() }, work.now()), (output) => ({ type: "LOADED", output })),
      process: ({ context: c, self }) => report(self, () => work.drain(c.stored!, c.mailbox, work.now), (output) => ({ type: "PROCESSED", output })),
      render: ({ context: c, self }) => {
        const render = c.render;
        // Failed or not, the render is over: a failed one is retried by the next change.
        const done = () => ({ type: "RENDERED", render }) as const;
        report(self, () => work.render(c.stored!, viewsAffectedBy(c.dirty)).catch((err: unknown) => work.log.warn({ err, patient_id: c.patient_id }, "view render failed; reads render on demand")), done);
      },
    },
  });
}
