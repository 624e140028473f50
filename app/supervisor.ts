import cluster, { type Worker } from "node:cluster";
import type { Logger } from "pino";
import { CONFIG_EXIT_CODE, isReadyMessage, SHUTDOWN_GRACE_MS } from "./lifecycle.js";
import { relayReports, restartsMetric } from "./process-reports.js";
import { guardIdleWorker } from "./starvation-guard.js";

/** What the supervisor runs: the background worker or not, and how many api processes. */
export interface Plan {
  worker: boolean;
  api: number;
  /** The worker runs under SCHED_IDLE (PSS_WORKER_SCHEDULER): watch it for starvation (starvation-guard.ts). */
  idleWorker?: boolean;
}

/** Wait before restarting a child that died: doubled for each death in a row, up to the most. */
const RESTART_FIRST_MS = 500;
const RESTART_MOST_MS = 10_000;
/** A child that ran this long before dying is restarted after the first wait again. */
const STABLE_AFTER_MS = 30_000;
/**
 * The api processes start once the worker owns embedded ClickHouse, or after this wait at
 * the most (a worker that cannot start must not keep the service from answering: its
 * queries are then 503 with Retry-After until it does).
 */
const WORKER_READY_WAIT_MS = 60_000;
/** Of the grace period, what is kept for the worker's stop after the api processes' stops. */
const WORKER_STOP_SHARE_MS = 3_000;

type ChildRole = "api" | "worker";

interface Slot {
  role: ChildRole;
  child: Worker | null;
  startedAt: number;
  deathsInARow: number;
  restart: NodeJS.Timeout | null;
  exited: Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)).unref());

/**
 * The primary of `npm start` with PSS_ROLE=all (and of PSS_ROLE=api with PSS_WORKERS > 1):
 * it serves nothing and loads neither Fastify nor any backend's client, only forks and
 * watches its children (node:cluster, so the api processes share the port):
 *
 * - the background worker first (PSS_ROLE=worker in its environment; it lowers its own
 *   priority), then, once it owns embedded ClickHouse, the api processes (PSS_ROLE=api);
 * - a child that dies is started again after a short wait, doubled while it keeps dying;
 * - a worker under SCHED_IDLE that cannot run goes back under the normal policy for a while
 *   (starvation-guard.ts);
 * - it relays its children's questions to each other (app/process-reports.ts), so an api
 *   process answering /metrics or /healthz speaks for the worker too;
 * - on SIGTERM or SIGINT the api processes stop first (finishing their requests), then the
 *   worker (acknowledging what it applied), all within SHUTDOWN_GRACE_MS; a child still
 *   there at its share's end is killed, which loses nothing (JetStream delivers again).
 */
export async function supervise(plan: Plan, log: Logger): Promise<void> {
  let stopping = false;
  const slots: Slot[] = [];
  let workerReady: () => void = () => undefined;
  const firstReady = new Promise<void>((r) => (workerReady = r));
  const restarts: Record<string, number> = plan.worker ? { api: 0, worker: 0 } : { api: 0 };
  relayReports((kind) => (kind === "metrics" ? { metrics: [restartsMetric(restarts)] } : {}));

  const fork = (slot: Slot) => {
    slot.startedAt = Date.now();
    slot.restart = null;
    const child = cluster.fork({ PSS_ROLE: slot.role });
    slot.child = child;
    const unguard = slot.role === "worker" && plan.idleWorker && child.process.pid ? guardIdleWorker(child.process.pid, log) : () => undefined;
    slot.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        unguard();
        slot.child = null;
        resolve();
        onExit(slot, child, code, signal);
      });
    });
    child.on("message", (m: unknown) => {
      if (!isReadyMessage(m)) return;
      log.info({ child: slot.role, child_pid: child.process.pid }, `${slot.role} process ready`);
      if (slot.role === "worker") workerReady();
    });
  };

  const onExit = (slot: Slot, child: Worker, code: number | null, signal: string | null) => {
    if (stopping) return;
    if (code === CONFIG_EXIT_CODE) {
      log.error({ child: slot.role, child_pid: child.process.pid, code }, `${slot.role} process refused its configuration (its message is above); stopping, as another would be refused too`);
      void stop("refused configuration", CONFIG_EXIT_CODE);
      return;
    }
    slot.deathsInARow = Date.now() - slot.startedAt >= STABLE_AFTER_MS ? 1 : slot.deathsInARow + 1;
    const wait = Math.min(RESTART_MOST_MS, RESTART_FIRST_MS * 2 ** (slot.deathsInARow - 1));
    log.warn({ child: slot.role, child_pid: child.process.pid, code, signal, restart_in_ms: wait }, `${slot.role} process exited; starting another`);
    restarts[slot.role] = (restarts[slot.role] ?? 0) + 1;
    slot.restart = setTimeout(() => fork(slot), wait);
  };

  const add = (role: ChildRole) => {
    const slot: Slot = { role, child: null, startedAt: 0, deathsInARow: 0, restart: null, exited: Promise.resolve() };
    slots.push(slot);
    fork(slot);
  };

  /** Signals the slots' children, waits for them until `until`, kills what is left. */
  const stopSlots = async (role: ChildRole, until: number) => {
    const mine = slots.filter((s) => s.role === role);
    for (const s of mine) {
      if (s.restart) clearTimeout(s.restart);
      s.child?.process.kill("SIGTERM");
    }
    await Promise.race([Promise.all(mine.map((s) => s.exited)), sleep(until - Date.now())]);
    for (const s of mine) {
      if (!s.child) continue;
      log.warn({ child: role, child_pid: s.child.process.pid }, `${role} process did not stop in time; killed`);
      s.child.process.kill("SIGKILL");
    }
  };

  const stop = async (reason: string, exitCode = 0) => {
    if (stopping) return;
    stopping = true;
    log.info({ reason }, plan.worker ? "stopping: the api processes, then the worker" : "stopping the api processes");
    workerReady();
    const deadline = Date.now() + SHUTDOWN_GRACE_MS;
    await stopSlots("api", plan.worker ? deadline - WORKER_STOP_SHARE_MS : deadline);
    if (plan.worker) await stopSlots("worker", deadline);
    log.info("stopped");
    process.exit(exitCode);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));

  log.info({ worker: plan.worker, api_processes: plan.api }, "supervisor starting its processes");
  if (plan.worker) {
    add("worker");
    const waited = await Promise.race([firstReady.then(() => true), sleep(WORKER_READY_WAIT_MS).then(() => false)]);
    if (!waited) log.warn({ after_ms: WORKER_READY_WAIT_MS }, "the worker is not ready yet; starting the api processes anyway");
  }
  if (stopping) return;
  for (let i = 0; i < plan.api; i++) add("api");
}
