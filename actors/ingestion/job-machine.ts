import { assign, fromPromise, setup } from "xstate";
import { errorMessage } from "./stage-deps.js";

/** What every stage actor is told: which job (its record holds the rest). */
export interface StageInput {
  job_id: string;
  organization_id: string;
  project_id: string;
}

export interface JobMachineInput extends StageInput {
  require_confirmation: boolean;
  rollback_on_cancel: boolean;
  summary_types: string[] | null;
  /** Complete after the replay without a view backfill. @default false */
  skip_backfill: boolean;
  /** How long AWAITING_CONFIRMATION waits before cancelling, in ms. @default 604_800_000 (7 days) */
  confirm_timeout_ms: number;
}

export interface JobContext extends JobMachineInput {
  /** Epoch ms at which an unconfirmed job is cancelled; set on entering AWAITING_CONFIRMATION. */
  confirm_deadline: number | null;
  /** Logs reached patient state: from here a failure no longer erases created patients. */
  replay_started: boolean;
  /** Why the job failed or was cancelled. */
  message: string | null;
  /** False when the view backfill failed (the job still completes: its logs are in). */
  backfill_ok: boolean | null;
}

export type JobEvent =
  | { type: "START" }
  | { type: "CONFIRM"; summary_types?: string[] }
  /** The review changes what confirmation will do (PATCH while awaiting confirmation). */
  | { type: "REVISE"; summary_types?: string[]; skip_backfill?: boolean }
  /** `rollback`: remove the patients the job created, whatever rollback_on_cancel said (absent: it decides). */
  | { type: "CANCEL"; reason?: string; rollback?: boolean };

const notProvided = (name: string) => async (): Promise<never> => {
  throw new Error(`${name} is provided by actors/ingestion/wiring.ts`);
};

/**
 * An ingestion job (overview "States and transitions", contract "Ingestion jobs").
 * State names are the contract's stages; CANCELLING and FAILING clean up before the
 * final CANCELLED and FAILED. Every side effect is a named actor, provided in
 * actors/ingestion/wiring.ts with `machine.provide()`; the machine itself only decides.
 *
 * QUEUED → VALIDATING → INSERTING_PATIENTS → INSERTING_LOGS → (AWAITING_CONFIRMATION →)
 * REPLAYING → BACKFILLING → COMPLETED (straight from REPLAYING when the review chose
 * skip_backfill). Cancel is accepted until replay starts: once logs reach patient state,
 * a job can only finish.
 */
export const jobMachine = setup({
  types: { context: {} as JobContext, events: {} as JobEvent, input: {} as JobMachineInput },
  actors: {
    /** Streams the file and checks every line; structural errors fail the job. */
    validate: fromPromise<{ structural_errors: number }, StageInput>(notProvided("validate")),
    /** Creates the file's patients (existing external identifiers are reused). */
    insertPatients: fromPromise<void, StageInput>(notProvided("insertPatients")),
    /** Stages the valid logs per patient, without touching patient state. */
    stageLogs: fromPromise<void, StageInput>(notProvided("stageLogs")),
    /** Resolves at the confirmation deadline. */
    confirmTimer: fromPromise<void, { deadline: number }>(notProvided("confirmTimer")),
    /** Writes the staged logs into patient state, per patient in timestamp order. */
    replay: fromPromise<void, StageInput>(notProvided("replay")),
    /** Regenerates the chosen views of every patient the job touched. */
    backfill: fromPromise<void, StageInput & { summary_types: string[] | null }>(notProvided("backfill")),
    /** Drops staged logs; with rollback, also the patients the job created. */
    cleanup: fromPromise<void, StageInput & { rollback: boolean }>(notProvided("cleanup")),
  },
  guards: {
    needsConfirmation: ({ context }) => context.require_confirmation,
    // A snapshot saved before skip_backfill existed has none: it backfills.
    skipsBackfill: ({ context }) => context.skip_backfill === true,
  },
  actions: {
    noteCancel: assign({
      message: ({ event }) => (event.type === "CANCEL" ? (event.reason ?? "cancelled on request") : null),
      // The cancel's choice becomes the job's: the clean-up reads it, and the record shows what was done.
      rollback_on_cancel: ({ context, event }) => (event.type === "CANCEL" ? (event.rollback ?? context.rollback_on_cancel) : context.rollback_on_cancel),
    }),
  },
}).createMachine({
  id: "ingestionJob",
  context: ({ input }) => ({ ...input, confirm_deadline: null, replay_started: false, message: null, backfill_ok: null }),
  initial: "QUEUED",
  states: {
    QUEUED: {
      on: { START: "VALIDATING", CANCEL: { target: "CANCELLING", actions: "noteCancel" } },
    },
    VALIDATING: {
      invoke: {
        src: "validate",
        input: ({ context }) => stageInput(context),
        onDone: [
          {
            guard: ({ event }) => event.output.structural_errors > 0,
            target: "FAILING",
            actions: assign({ message: ({ event }) => `the file has ${event.output.structural_errors} invalid line(s); see error_summary` }),
          },
          { target: "INSERTING_PATIENTS" },
        ],
        onError: { target: "FAILING", actions: assign({ message: ({ event }) => `validation failed: ${errorMessage(event.error)}` }) },
      },
      on: { CANCEL: { target: "CANCELLING", actions: "noteCancel" } },
    },
    INSERTING_PATIENTS: {
      invoke: {
        src: "insertPatients",
        input: ({ context }) => stageInput(context),
        onDone: "INSERTING_LOGS",
        onError: { target: "FAILING", actions: assign({ message: ({ event }) => `creating patients failed: ${errorMessage(event.error)}` }) },
      },
      on: { CANCEL: { target: "CANCELLING", actions: "noteCancel" } },
    },
    INSERTING_LOGS: {
      invoke: {
        src: "stageLogs",
        input: ({ context }) => stageInput(context),
        onDone: [
          {
            guard: "needsConfirmation",
            target: "AWAITING_CONFIRMATION",
            actions: assign({ confirm_deadline: ({ context }) => Date.now() + context.confirm_timeout_ms }),
          },
          { target: "REPLAYING" },
        ],
        onError: { target: "FAILING", actions: assign({ message: ({ event }) => `staging logs failed: ${errorMessage(event.error)}` }) },
      },
      on: { CANCEL: { target: "CANCELLING", actions: "noteCancel" } },
    },
    AWAITING_CONFIRMATION: {
      // A timer actor, not an `after` delay: a restored snapshot restarts it with the
      // same deadline, so a restart neither forgets the time-out nor restarts the 7 days.
      invoke: {
        src: "confirmTimer",
        input: ({ context }) => ({ deadline: context.confirm_deadline ?? Date.now() }),
        onDone: {
          target: "CANCELLING",
          actions: assign({ message: ({ context }) => `not confirmed within ${Math.round(context.confirm_timeout_ms / 1000)} s; cancelled automatically` }),
        },
      },
      on: {
        CONFIRM: {
          target: "REPLAYING",
          actions: assign({ summary_types: ({ context, event }) => event.summary_types ?? context.summary_types }),
        },
        REVISE: {
          actions: assign({
            summary_types: ({ context, event }) => event.summary_types ?? context.summary_types,
            skip_backfill: ({ context, event }) => event.skip_backfill ?? context.skip_backfill,
          }),
        },
        CANCEL: { target: "CANCELLING", actions: "noteCancel" },
      },
    },
    REPLAYING: {
      entry: assign({ replay_started: () => true }),
      invoke: {
        src: "replay",
        input: ({ context }) => stageInput(context),
        onDone: [{ guard: "skipsBackfill", target: "COMPLETED" }, { target: "BACKFILLING" }],
        onError: { target: "FAILING", actions: assign({ message: ({ event }) => `replay failed: ${errorMessage(event.error)}` }) },
      },
    },
    BACKFILLING: {
      invoke: {
        src: "backfill",
        input: ({ context }) => ({ ...stageInput(context), summary_types: context.summary_types }),
        onDone: { target: "COMPLETED", actions: assign({ backfill_ok: () => true }) },
        // The logs are in patient state; a failed view backfill is retried on request.
        onError: { target: "COMPLETED", actions: assign({ backfill_ok: () => false }) },
      },
    },
    CANCELLING: {
      invoke: {
        src: "cleanup",
        input: ({ context }) => ({ ...stageInput(context), rollback: context.rollback_on_cancel }),
        onDone: "CANCELLED",
        onError: { target: "CANCELLED", actions: assign({ message: ({ context, event }) => `${context.message ?? "cancelled"}; clean-up failed: ${errorMessage(event.error)}` }) },
      },
    },
    FAILING: {
      invoke: {
        src: "cleanup",
        input: ({ context }) => ({ ...stageInput(context), rollback: context.rollback_on_cancel && !context.replay_started }),
        onDone: "FAILED",
        onError: "FAILED",
      },
    },
    COMPLETED: { type: "final" },
    FAILED: { type: "final" },
    CANCELLED: { type: "final" },
  },
});

function stageInput(c: JobContext): StageInput {
  return { job_id: c.job_id, organization_id: c.organization_id, project_id: c.project_id };
}

export type JobMachine = typeof jobMachine;
export type JobStateName = "QUEUED" | "VALIDATING" | "INSERTING_PATIENTS" | "INSERTING_LOGS" | "AWAITING_CONFIRMATION" | "REPLAYING" | "BACKFILLING" | "CANCELLING" | "FAILING" | "COMPLETED" | "FAILED" | "CANCELLED";
