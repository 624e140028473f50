import { execSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Pool } from "undici";

export interface ServiceUnderTest {
  url: string;
  adminKey: string;
  namespace: string;
  pool: Pool;
  proc: ChildProcess;
  /** CPU seconds the service's processes (the supervisor and its children) used so far (user + system). */
  cpuSeconds(): number;
  /** The same, per process kind: the supervisor, the worker, the api processes (summed). */
  cpuByRole(): Record<string, number>;
  stop(): Promise<void>;
}

/** A process and its descendants: `npm start` is a supervisor with a worker and api processes. */
function processTree(pid: number): number[] {
  const out = [pid];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const kids = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (kids) for (const k of kids.split(/\s+/)) out.push(...processTree(Number(k)));
    }
  } catch {
    // exited meanwhile
  }
  return out;
}

/**
 * Peak and current RSS of a process with its descendants, in MB (VmHWM, VmRSS), and the
 * current split into anonymous memory and file-backed pages (RssAnon, RssFile): embedded
 * ClickHouse's library alone maps 150-250 MB of code into the worker's RSS. Summed over
 * the processes: the peak is the sum of each one's peak, so at most that at any moment.
 */
export function rss(pid: number): { peak: number; now: number; anon: number; file: number; peakByProcess: Record<string, number> } {
  const total = { peak: 0, now: 0, anon: 0, file: 0 };
  const peakByProcess: Record<string, number> = {};
  for (const p of processTree(pid)) {
    let s: string;
    try {
      s = readFileSync(`/proc/${p}/status`, "utf8");
    } catch {
      continue;
    }
    const mb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0) / 1024;
    total.peak += mb("VmHWM");
    const role = p === pid ? "supervisor" : roleOf(p);
    peakByProcess[role] = Math.round((peakByProcess[role] ?? 0) + mb("VmHWM"));
    total.now += mb("VmRSS");
    total.anon += mb("RssAnon");
    total.file += mb("RssFile");
  }
  return { peak: Math.round(total.peak), now: Math.round(total.now), anon: Math.round(total.anon), file: Math.round(total.file), peakByProcess };
}

/** What `npm start` runs; the `bench:*` scripts build it (tsconfig.bench.json) first. */
const SERVICE_ENTRY = "dist/app/main.js";

/** Starts the real service, compiled as `npm start` runs it, in its own process and namespace. */
export async function startService(env: Record<string, string> = {}, connections = 64): Promise<ServiceUnderTest> {
  if (!existsSync(SERVICE_ENTRY)) throw new Error(`${SERVICE_ENTRY} is missing: run \`npm run build\` (the bench:* scripts do)`);
  const namespace = `bench${randomBytes(4).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "pss-bench-"));
  const adminKey = `bench-admin-${randomBytes(12).toString("hex")}`;
  const port = String(20_000 + Math.floor(Math.random() * 20_000));
  const extra = (process.env.BENCH_NODE_ARGS ?? "").split(/\s+/).filter(Boolean);
  // The same flags as `npm start`.
  const proc = spawn(process.execPath, ["--max-semi-space-size=32", ...extra, SERVICE_ENTRY], {
    env: {
      ...process.env,
      PORT: port,
      PSS_NAMESPACE: namespace,
      PSS_ADMIN_KEY: adminKey,
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  let exited = null as number | null;
  proc.once("exit", (code) => (exited = code ?? -1));
  for (let i = 0; i < 200; i++) {
    if (exited !== null) throw new Error(`the service exited (code ${exited}) before it answered /healthz`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.status === 200) break;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  return {
    url,
    adminKey,
    namespace,
    pool,
    proc,
    cpuSeconds() {
      return processTree(proc.pid!).reduce((sum, pid) => sum + processCpu(pid), 0);
    },
    cpuByRole() {
      const out: Record<string, number> = {};
      for (const pid of processTree(proc.pid!)) {
        const role = pid === proc.pid ? "supervisor" : roleOf(pid);
        out[role] = (out[role] ?? 0) + processCpu(pid);
      }
      return out;
    },
    async stop() {
      await pool.close();
      // The supervisor's children (the worker, the api processes) may still write their last
      // Redis keys after it exits: wait for them too, or the cleanup below runs before they do.
      const workers = processTree(proc.pid!).slice(1);
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
      for (let i = 0; i < 100 && workers.some((pid) => existsSync(`/proc/${pid}`)); i++) await new Promise((r) => setTimeout(r, 100));
      // The bench namespace's streams are dropped by each bench; its Redis keys here.
      execSync(`redis-cli --scan --pattern '${namespace}:*' | xargs -r -n 1000 redis-cli del > /dev/null`, { shell: "/bin/bash" });
      // Embedded ClickHouse's data: a few hundred MB per run.
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function call(pool: Pool, adminKey: string, method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await pool.request({
    method,
    path,
    headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.body.text();
  return { status: r.statusCode, json: text ? JSON.parse(text) : undefined };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

/** CPU seconds (user + system, all threads) a live process used so far; 0 once it has exited. */
export function processCpu(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** A service process's PSS_ROLE as its supervisor (or a bench) gave it; "api" without one. */
function roleOf(pid: number): string {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    return env.find((e) => e.startsWith("PSS_ROLE="))?.slice("PSS_ROLE=".length) ?? "api";
  } catch {
    return "api";
  }
}

/**
 * CPU seconds used so far by the oldest local process named `name` (0 when there is none).
 * nats-server and Redis are shared by whatever else runs on the machine: their figures
 * include other users' work.
 */
function serverCpu(name: string): number {
  try {
    return processCpu(Number(execSync(`pgrep -o ${name}`).toString().trim()));
  } catch {
    return 0;
  }
}

export const natsServerCpu = () => serverCpu("nats-server");
export const redisServerCpu = () => serverCpu("redis-server");
