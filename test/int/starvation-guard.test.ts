import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { guardIdleWorker } from "../../app/starvation-guard.js";
import { setIdleScheduling } from "../../app/process-priority.js";

const busy = () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" });
/** The scheduling policy of a process's main thread (0 SCHED_OTHER, 5 SCHED_IDLE). */
const policy = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38]);
};

let children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children) c.kill("SIGKILL");
  children = [];
});

describe("the supervisor's starvation guard, on real processes", () => {
  it("puts a worker under SCHED_IDLE that cannot run back under the normal policy while normal processes fill the cores", async () => {
    const worker = busy();
    children.push(worker);
    expect(setIdleScheduling(worker.pid!, true)).toBe(true);
    expect(policy(worker.pid!)).toBe(5);
    // One more busy loop than cores (the test runner is busy too): the idle-policy one starves.
    for (let i = 0; i < 3; i++) children.push(busy());
    const lines: string[] = [];
    const stop = guardIdleWorker(worker.pid!, pino({ level: "info" }, { write: (l: string) => void lines.push(l) }));
    try {
      const deadline = Date.now() + 8_000;
      while (policy(worker.pid!) !== 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(policy(worker.pid!)).toBe(0);
      expect(lines.join("")).toContain("could not run under SCHED_IDLE");
    } finally {
      stop();
    }
  }, 15_000);
});
