import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import { setIdleScheduling } from "./process-priority.js";

/** How often the worker's main thread is sampled. */
const SAMPLE_MS = 1_000;
/** Starved: in a second, it waited this long to run and ran less than STARVED_RAN_MS. */
const STARVED_WAITED_MS = 600;
const STARVED_RAN_MS = 50;
/** Back to SCHED_IDLE after this many seconds in a row of waiting less than CALM_WAITED_MS. */
const CALM_SECONDS = 10;
const CALM_WAITED_MS = 200;

export interface GuardState {
  idle: boolean;
  calmSeconds: number;
}

/** One second of a thread's life: ms on a CPU, and ms runnable but waiting for one. */
export interface Sample {
  ranMs: number;
  waitedMs: number;
}

/**
 * The guard's decision for one sample: a worker under SCHED_IDLE that could not run goes
 * back under the normal policy (at its niceness), since its lease renewals and the logs
 * waiting in JetStream would otherwise wait as long as other processes fill the cores (its
 * partitions' leases lapsed and were taken again every few seconds while three busy loops
 * ran); it returns to SCHED_IDLE once it has run without waiting for a while.
 */
export function decide(state: GuardState, sample: Sample): { state: GuardState; change: "demote" | "restore" | null } {
  if (state.idle) {
    const starved = sample.waitedMs >= STARVED_WAITED_MS && sample.ranMs < STARVED_RAN_MS;
    return starved ? { state: { idle: false, calmSeconds: 0 }, change: "demote" } : { state, change: null };
  }
  const calmSeconds = sample.waitedMs < CALM_WAITED_MS ? state.calmSeconds + 1 : 0;
  return calmSeconds >= CALM_SECONDS ? { state: { idle: true, calmSeconds: 0 }, change: "restore" } : { state: { idle: false, calmSeconds }, change: null };
}

/** A thread's total ns on a CPU and waiting on a run queue (/proc/<pid>/schedstat), or null once it is gone. */
function schedstat(pid: number): [number, number] | null {
  try {
    const [ran, waited] = readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ").map(Number);
    return ran === undefined || waited === undefined || Number.isNaN(ran) || Number.isNaN(waited) ? null : [ran, waited];
  } catch {
    return null;
  }
}

/**
 * Watches the worker's main thread from the supervisor (which runs under the normal policy,
 * so it is not starved with it) and moves the worker between SCHED_IDLE and the normal
 * policy as `decide` says. Returns a stop function.
 */
export function guardIdleWorker(pid: number, log: Logger): () => void {
  let state: GuardState = { idle: true, calmSeconds: 0 };
  let last = schedstat(pid);
  const timer = setInterval(() => {
    const now = schedstat(pid);
    if (!now || !last) return stop();
    const sample = { ranMs: (now[0] - last[0]) / 1e6, waitedMs: (now[1] - last[1]) / 1e6 };
    last = now;
    const next = decide(state, sample);
    state = next.state;
    if (!next.change) return;
    if (!setIdleScheduling(pid, next.change === "restore")) {
      // No chrt, or not allowed: the worker keeps whatever policy it has, and its niceness.
      log.warn({ worker_pid: pid }, "the worker's scheduling policy could not be changed; no longer watching it for starvation");
      return stop();
    }
    if (next.change === "demote") log.warn({ worker_pid: pid, ...sample }, "the worker could not run under SCHED_IDLE (other processes fill the cores); it runs under the normal policy at its niceness until they calm down");
    else log.info({ worker_pid: pid }, "the cores are calm again; the worker is back under SCHED_IDLE");
  }, SAMPLE_MS).unref();
  const stop = () => clearInterval(timer);
  return stop;
}
