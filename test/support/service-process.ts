import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** What `npm start` runs, and the folders tsconfig.build.json compiles into it. */
const ENTRY = join(ROOT, "dist/app/main.js");
const BUILD_INFO = join(ROOT, "dist/.tsbuildinfo");
const SOURCES = ["catalog", "readmodels", "query", "infra", "src", "actors", "app", "client", "cli"];

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (e.name.endsWith(".ts")) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds dist/ (`npm run build`) when a source is newer than the last build. */
export function ensureBuilt(): void {
  const built = existsSync(ENTRY) && existsSync(BUILD_INFO) ? statSync(BUILD_INFO).mtimeMs : 0;
  if (Math.max(...SOURCES.map((d) => newestSource(join(ROOT, d)))) <= built) return;
  // Vitest sets NODE_ENV=test, which Vite would honour: the console would be built with
  // Preact's development checks, which a user's build (npm start, npm install) never has.
  const { NODE_ENV: _runner, ...env } = process.env;
  execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: "ignore", env });
}

/** One JSON log line of a service process. */
export type LogLine = Record<string, unknown> & { role?: string; pid?: number; msg?: string };

export interface ServiceProcess {
  proc: ChildProcess;
  /** Every JSON line written on stdout so far; `other` holds lines that were not JSON. */
  lines: LogLine[];
  other: string[];
  /** Resolves with the first line (past or future) that `match` accepts; rejects after `ms`. */
  line(match: (l: LogLine) => boolean, ms?: number): Promise<LogLine>;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
}

/** Starts the compiled service as `npm start` does (`node --max-semi-space-size=32 dist/app/main.js`). */
export function startServiceProcess(env: Record<string, string>): ServiceProcess {
  const proc = spawn(process.execPath, ["--max-semi-space-size=32", ENTRY], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const lines: LogLine[] = [];
  const other: string[] = [];
  const waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  let rest = "";
  const take = (chunk: string, parse: boolean) => {
    rest += chunk;
    const parts = rest.split("\n");
    rest = parts.pop()!;
    for (const text of parts.filter(Boolean)) {
      let l: LogLine | null = null;
      try {
        if (parse) l = JSON.parse(text) as LogLine;
      } catch {
        // kept below as a line that is not JSON
      }
      if (!l) {
        other.push(text);
        continue;
      }
      lines.push(l);
      for (const w of [...waiters]) {
        if (!w.match(l)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(l);
      }
    }
  };
  proc.stdout.setEncoding("utf8").on("data", (c: string) => take(c, true));
  proc.stderr.setEncoding("utf8").on("data", (c: string) => other.push(c));
  // PSS_TEST_LOG_DIR keeps every line a service process writes, one file per process, to read after a failure.
  const dump = process.env.PSS_TEST_LOG_DIR;
  if (dump) {
    const file = join(dump, `${env.PSS_NAMESPACE ?? "service"}-${env.PORT ?? "port"}-${proc.pid}.log`);
    proc.stdout.on("data", (c: string) => appendFileSync(file, c));
    proc.stderr.on("data", (c: string) => appendFileSync(file, c));
  }
  const exited = new Promise<number | string>((r) => proc.once("exit", (code, signal) => r(code ?? signal ?? -1)));
  return {
    proc,
    lines,
    other,
    exited,
    line(match, ms = 30_000) {
      const seen = lines.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const w = { match, resolve: (l: LogLine) => (clearTimeout(timer), resolve(l)) };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no matching log line within ${ms} ms; last lines: ${JSON.stringify(lines.slice(-5))} ${other.slice(-5).join(" ")}`));
        }, ms);
        waiters.push(w);
      });
    },
  };
}

/** A process's niceness (field 19 of /proc/<pid>/stat; the name in field 2 may hold spaces). */
export function niceness(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

/** The Linux scheduling policy of each of a process's threads (0 SCHED_OTHER, 5 SCHED_IDLE). */
export function threadPolicies(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[38]);
  });
}

/** The pids of a process's children. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}
