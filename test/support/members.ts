import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { connectNats } from "../../infra/nats/connection.js";
import { destroyTopology } from "../../infra/nats/topology.js";
import { connectRedis, deleteKeys } from "../../infra/redis/connection.js";
import { childrenOf, startServiceProcess, type ServiceProcess } from "./service-process.js";

/** One `npm start` of a namespace shared with others: its own PORT and DATA_DIR. */
export interface Member {
  name: string;
  port: number;
  base: string;
  dataDir: string;
  process: ServiceProcess | null;
}

export interface Group {
  ns: string;
  adminKey: string;
  members: Member[];
  /** Starts the member; `env` adds to (or overrides) the group's environment for this start only. */
  start(m: Member, env?: Record<string, string>): Promise<void>;
  /** SIGKILL of the member's supervisor and every process it forked: a machine lost at once. */
  kill(m: Member): Promise<void>;
  /** SIGTERM, as an orchestrator stops a member; resolves once every process has exited. */
  stop(m: Member): Promise<void>;
  call(m: Member, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string; stale: boolean }>;
  /** Partitions each live member's worker applies now (from its /healthz), by member name. */
  partitions(): Promise<Map<string, number[]>>;
  /** The live members whose worker holds the lease on `resource` now (from their /healthz). */
  holders(resource: string): Promise<Member[]>;
  drop(): Promise<void>;
}

export async function memberGroup(count: number, env: Record<string, string> = {}): Promise<Group> {
  const ns = `t${randomBytes(5).toString("hex")}`;
  const adminKey = `admin-${randomBytes(16).toString("hex")}`;
  const basePort = 20_000 + Math.floor(Math.random() * 20_000);
  const members: Member[] = Array.from({ length: count }, (_, i) => ({
    name: `m${i + 1}`,
    port: basePort + i,
    base: `http://127.0.0.1:${basePort + i}`,
    dataDir: mkdtempSync(join(tmpdir(), `pss-member${i + 1}-`)),
    process: null,
  }));
  const call: Group["call"] = async (m, method, path, body) => {
    const r = await fetch(`${m.base}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: r.status, json, text, stale: r.headers.get("x-pss-stale") === "true" };
  };
  const health = <T>(m: Member) => fetch(`${m.base}/healthz`).then((r) => r.json() as Promise<T>, () => null);
  const exited = async (m: Member) => {
    await m.process?.exited;
    m.process = null;
  };
  const group: Group = {
    ns,
    adminKey,
    members,
    call,
    async start(m, more = {}) {
      m.process = startServiceProcess({
        PORT: String(m.port), DATA_DIR: m.dataDir, PSS_NAMESPACE: ns, PSS_ADMIN_KEY: adminKey, LOG_LEVEL: "info", PSS_VIEW_DEBOUNCE_MS: "50", ...env, ...more,
      });
      const end = Date.now() + 60_000;
      for (;;) {
        const ok = await fetch(`${m.base}/healthz`).then((r) => r.status === 200, () => false);
        if (ok) return;
        if (Date.now() > end || m.process.proc.exitCode !== null) throw new Error(`member ${m.name} did not start: ${m.process.other.slice(-5).join(" ")}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    async kill(m) {
      const pid = m.process?.proc.pid;
      if (!pid) return;
      const all = [pid, ...childrenOf(pid)];
      for (const p of all) {
        try {
          process.kill(p, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await exited(m);
    },
    async stop(m) {
      m.process?.proc.kill("SIGTERM");
      await exited(m);
    },
    async partitions() {
      // Asked of every member at once: one busy member's /healthz (its backend probes wait up
      // to 2 s) must not delay what the others say.
      const live = members.filter((m) => m.process);
      const answers = await Promise.all(live.map((m) => health<{ processes?: { role: string; partitions: number[] }[] }>(m)));
      const out = new Map<string, number[]>();
      live.forEach((m, i) => {
        const workers = (answers[i]?.processes ?? []).filter((p) => p.role !== "api");
        if (workers.length > 0) out.set(m.name, workers.flatMap((p) => p.partitions));
      });
      return out;
    },
    async holders(resource) {
      const live = members.filter((m) => m.process);
      const answers = await Promise.all(live.map((m) => health<{ processes?: { leases?: { resource: string }[] }[] }>(m)));
      return live.filter((_, i) => (answers[i]?.processes ?? []).some((p) => (p.leases ?? []).some((l) => l.resource === resource)));
    },
    async drop() {
      for (const m of members) if (m.process) await group.kill(m);
      const nc = await connectNats("nats://127.0.0.1:4222");
      const redis = await connectRedis("redis://127.0.0.1:6379");
      await destroyTopology(nc, ns);
      await deleteKeys(redis, `${ns}:*`);
      await nc.close();
      await redis.quit();
      for (const m of members) rmSync(m.dataDir, { recursive: true, force: true });
    },
  };
  return group;
}
