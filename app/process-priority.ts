import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

/** Highest niceness Linux takes (the lowest priority). */
const MAX_NICENESS = 19;

/**
 * Lowers this process's scheduling priority by `increment` niceness (capped at 19): any
 * process may do so to itself, without privileges. Linux keeps a niceness per thread, and a
 * thread takes its creator's: so every thread already running (V8's platform threads, libuv's
 * pool once started) is lowered too, and threads made later (embedded ClickHouse's, a replay
 * thread) start from the lowered main thread. Returns the niceness now in force.
 */
export function lowerOwnPriority(increment: number): number {
  if (increment <= 0) return getPriority();
  const target = Math.min(MAX_NICENESS, getPriority() + increment);
  setPriority(target);
  let threads: string[] = [];
  try {
    threads = readdirSync("/proc/self/task");
  } catch {
    // Not Linux: the niceness is the process's, set above.
  }
  for (const tid of threads) {
    try {
      // setpriority(PRIO_PROCESS, tid) addresses one thread on Linux.
      setPriority(Number(tid), target);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return target;
}

/**
 * Puts every thread of process `pid` under Linux's SCHED_IDLE policy, or back under the
 * normal one (`chrt --all-tasks`, from util-linux; threads made later inherit the policy of
 * their creator, and each keeps its niceness). Niceness only shares the CPU out in
 * proportion, and a niced worker still ran whenever an api process or nats-server paused for
 * a moment, so they found a core taken when they woke; a normal thread that wakes takes the
 * CPU from an idle-policy one at once. An idle-policy process gets almost nothing while
 * normal ones fill the cores, so the supervisor puts a starved worker back (see
 * starvation-guard.ts). False where the policy cannot be set (not Linux, no chrt).
 */
export function setIdleScheduling(pid: number, idle: boolean): boolean {
  try {
    execFileSync("chrt", [idle ? "--idle" : "--other", "--all-tasks", "--pid", "0", String(pid)], { stdio: "ignore", timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}
