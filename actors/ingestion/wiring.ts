import { fromPromise } from "xstate";
import { jobMachine, type StageInput } from "./job-machine.js";
import type { LiveJob, StageDeps, StageFn } from "./stage-deps.js";
import { validateStage } from "./stages/validate.js";
import { insertPatientsStage } from "./stages/insert-patients.js";
import { stageLogsStage } from "./stages/stage-logs.js";
import { replayStage } from "./stages/replay.js";
import { backfillStage } from "./stages/backfill.js";
import { cleanupStage } from "./stages/cleanup.js";

/** Longest single timer (setTimeout takes at most 2^31-1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Resolves at `deadline` (epoch ms); never resolves once aborted (the machine has moved on). */
export function sleepUntil(deadline: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let t: NodeJS.Timeout;
    const arm = () => {
      const left = deadline - Date.now();
      if (left <= 0) return resolve();
      t = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    };
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the abort's own reason, as the platform's abortable APIs reject (xstate aborts with an AbortError)
      reject(signal.reason);
    }, { once: true });
    arm();
  });
}

/**
 * The one place where the job machine meets I/O: each named actor of
 * actors/ingestion/job-machine.ts is bound here to its stage (actors/ingestion/stages/),
 * with the adapters it needs and the live job it updates. Tests provide fakes instead.
 */
export function provideJobMachine(deps: StageDeps, live: (jobId: string) => LiveJob) {
  const bind = <I extends StageInput, O>(fn: StageFn<I, O>) =>
    fromPromise<O, I>(({ input, signal }) => {
      const job = live(input.job_id);
      return job.track(fn(deps, job, input, signal));
    });
  return jobMachine.provide({
    actors: {
      validate: bind(validateStage),
      insertPatients: bind(insertPatientsStage),
      stageLogs: bind(stageLogsStage),
      confirmTimer: fromPromise<void, { deadline: number }>(({ input, signal }) => sleepUntil(input.deadline, signal)),
      replay: bind(replayStage),
      backfill: bind(backfillStage),
      cleanup: bind(cleanupStage),
    },
  });
}

export type ProvidedJobMachine = ReturnType<typeof provideJobMachine>;
