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
