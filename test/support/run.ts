import { spawn } from "node:child_process";

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a program to its end and gives back its exit code and output. Async, unlike
 * execFileSync: the service the program talks to lives in the test's own process.
 */
export function run(file: string, args: string[], o: { env: NodeJS.ProcessEnv; cwd?: string; input?: string }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env: o.env, ...(o.cwd ? { cwd: o.cwd } : {}) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(o.input ?? "");
  });
}
