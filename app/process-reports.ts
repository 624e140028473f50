import cluster, { type Worker } from "node:cluster";
import type { MetricJson } from "../infra/metrics/process-metrics.js";
import type { InstanceSnapshot } from "../infra/metrics/instance-status.js";

/*
 * Under a supervisor (PSS_ROLE=all, or api with PSS_WORKERS > 1) the processes of one member
 * answer for each other over node:cluster's IPC channel:
 *
 * - what each child works (its partitions and leases) is pushed to the supervisor when it
 *   changes and every second; an api process answering /healthz gets the siblings' latest
 *   at once, so a busy or niced worker never makes /healthz slow or incomplete
 *   (`reported_at` says how old each one is). A child silent for STALE_AFTER_MS (stopped,
 *   wedged) is left out: the leases it last named may have lapsed and been taken since;
 * - metrics are asked for when /metrics is scraped: the supervisor relays the question to
 *   every other child and the answers back, adding its own restart counts.
 *
 *   child ──instance──▶ supervisor (kept per child)
 *   api ──gather──▶ supervisor ──report?──▶ worker, other api processes   (metrics)
 *   api ◀─gathered── supervisor ◀─report──── each, within the wait
 */

/** How often a child says what it works even when nothing changed. */
const ANNOUNCE_EVERY_MS = 1_000;
/**
 * A report older than this is not passed on. Below the lease TTL's safety deadline (4.8 s
 * by default), so a paused holder is not shown holding leases others may hold by then.
 */
const STALE_AFTER_MS = 3_000;
/** How often a child checks whether what it works changed. */
const CHANGE_CHECK_MS = 200;

/** What one process says of itself: metrics only when they were asked for. */
export interface ProcessReport {
  instance?: InstanceSnapshot;
  metrics?: MetricJson[];
}

export type ReportKind = "instance" | "metrics";

/** The siblings' reports, and how many siblings did not answer within the wait. */
export interface Gathered {
  parts: ProcessReport[];
  missing: number;
}

/** Asks the other processes of this member for their reports. */
export interface Siblings {
  gather(kind: ReportKind, waitMs: number): Promise<Gathered>;
}

type Message =
  | { pss: "instance"; instance: InstanceSnapshot }
  | { pss: "gather"; id: number; kind: ReportKind; waitMs: number }
  | { pss: "gathered"; id: number; parts: ProcessReport[]; missing: number }
  | { pss: "report?"; relay: number; kind: ReportKind }
  | { pss: "report"; relay: number; part: ProcessReport };

const isMessage = (m: unknown): m is Message => typeof m === "object" && m !== null && typeof (m as { pss?: unknown }).pss === "string";

/** A process run alone has no siblings. */
export const NO_SIBLINGS: Siblings = { gather: () => Promise.resolve({ parts: [], missing: 0 }) };

/**
 * The child's side, in an api or worker process of a supervisor: pushes `instance()` to the
 * supervisor when it changes (and every ANNOUNCE_EVERY_MS), answers the supervisor's
 * `report?` with `report(kind)`, and gathers its siblings' reports through it. Outside
 * node:cluster (a process run alone, or tests) it does nothing and has no siblings.
 */
export function joinSiblings(report: (kind: ReportKind) => Promise<ProcessReport>, instance: () => InstanceSnapshot): Siblings {
  if (!cluster.isWorker || !process.send) return NO_SIBLINGS;
  const send = (m: Message) => process.send?.(m);
  const waiting = new Map<number, (g: Gathered) => void>();
  let nextId = 1;
  let said = "";
  let saidAt = 0;
  const announce = () => {
    const now = instance();
    const text = JSON.stringify({ ...now, reported_at: undefined });
    if (text === said && Date.now() - saidAt < ANNOUNCE_EVERY_MS) return;
    said = text;
    saidAt = Date.now();
    send({ pss: "instance", instance: now });
  };
  announce();
  setInterval(announce, CHANGE_CHECK_MS).unref();
  process.on("message", (m: unknown) => {
    if (!isMessage(m)) return;
    if (m.pss === "report?") {
      void report(m.kind).then(
        (part) => send({ pss: "report", relay: m.relay, part }),
        () => send({ pss: "report", relay: m.relay, part: {} }),
      );
    } else if (m.pss === "gathered") {
      waiting.get(m.id)?.({ parts: m.parts, missing: m.missing });
      waiting.delete(m.id);
    }
  });
  return {
    gather(kind, waitMs) {
      const id = nextId++;
      return new Promise<Gathered>((resolve) => {
        // The supervisor answers at waitMs with what it has; this bounds a supervisor gone.
        const timer = setTimeout(() => {
          waiting.delete(id);
          resolve({ parts: [], missing: 1 });
        }, waitMs + 500);
        waiting.set(id, (g) => (clearTimeout(timer), resolve(g)));
        send({ pss: "gather", id, kind, waitMs });
      });
    },
  };
}

/**
 * The supervisor's restarts of its children, as a metric (built by hand: the supervisor
 * does not load prom-client). `child` is the role of the process restarted.
 */
export function restartsMetric(restarts: Readonly<Record<string, number>>): MetricJson {
  const labels = (child: string) => ({ child, role: "supervisor", pid: String(process.pid) });
  const values = Object.entries(restarts).map(([child, value]) => ({ labels: labels(child), value }));
  const metric = { name: "pss_process_restarts_total", help: "Child processes the supervisor started again after they died, by the child's role", type: "counter", aggregator: "sum", values };
  return metric as unknown as MetricJson;
}

/**
 * The supervisor's side: keeps each child's latest pushed instance and answers an
 * `instance` gather with its siblings' at once; relays a `metrics` gather to the live
 * siblings and their reports back, within the wait the child gave. `own(kind)` is the
 * supervisor's own report (its restart counts), added to every answer.
 */
export function relayReports(own: (kind: ReportKind) => ProcessReport): void {
  const relays = new Map<number, { asker: Worker; id: number; parts: ProcessReport[]; pending: Set<number>; timer: NodeJS.Timeout }>();
  const instances = new Map<number, { instance: InstanceSnapshot; at: number }>();
  let nextRelay = 1;
  const finish = (relay: number) => {
    const r = relays.get(relay);
    if (!r) return;
    relays.delete(relay);
    clearTimeout(r.timer);
    if (r.asker.isConnected()) r.asker.send({ pss: "gathered", id: r.id, parts: r.parts, missing: r.pending.size } satisfies Message);
  };
  cluster.on("exit", (worker: Worker) => instances.delete(worker.id));
  cluster.on("message", (worker: Worker, m: unknown) => {
    if (!isMessage(m)) return;
    if (m.pss === "instance") {
      instances.set(worker.id, { instance: m.instance, at: Date.now() });
    } else if (m.pss === "report") {
      const r = relays.get(m.relay);
      if (!r?.pending.delete(worker.id)) return;
      r.parts.push(m.part);
      if (r.pending.size === 0) finish(m.relay);
    } else if (m.pss === "gather") {
      const others = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.id !== worker.id && w.isConnected());
      if (m.kind === "instance") {
        const fresh = others.flatMap((w) => {
          const said = instances.get(w.id);
          return said && Date.now() - said.at <= STALE_AFTER_MS ? [{ instance: said.instance }] : [];
        });
        const parts = [own(m.kind), ...fresh];
        const missing = others.length - fresh.length;
        worker.send({ pss: "gathered", id: m.id, parts, missing } satisfies Message);
        return;
      }
      const relay = nextRelay++;
      const timer = setTimeout(() => finish(relay), Math.min(Math.max(m.waitMs, 0), 10_000));
      relays.set(relay, { asker: worker, id: m.id, parts: [own(m.kind)], pending: new Set(others.map((w) => w.id)), timer });
      for (const w of others) w.send({ pss: "report?", relay, kind: m.kind } satisfies Message);
      if (others.length === 0) finish(relay);
    }
  });
}
