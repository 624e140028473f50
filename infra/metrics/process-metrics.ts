import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { InstanceRole, InstanceStatus } from "./instance-status.js";

/** Where logs come into the write path: POST /v1/logs/batch, a device feed, an ingestion job's replay. */
export type LogSource = "batch" | "feed" | "ingestion" | "fhir";

/** Told, per write, what became of its logs (src/logs/log-writer.ts). */
export interface LogOutcomes {
  /** `n` logs of `source` stored in the log stream. */
  accepted(source: LogSource, n: number): void;
  /** `n` logs of `source` refused with error code `code` (or not stored: `storage_error`). */
  rejected(source: LogSource, code: string, n: number): void;
}

/** A metric with its values, as prom-client's getMetricsAsJSON gives it: what processes hand each other. */
export type MetricJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>[number];

/**
 * The error codes of a log the write path refuses (docs/api.md, "POST /v1/logs/batch").
 * A code outside them counts as `other`, so a new code never grows the label's values
 * past what this list allows.
 */
const REJECT_REASONS = new Set(["validation_error", "unknown_log_type", "patient_not_found", "idempotency_conflict", "storage_error"]);
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);
const SOURCES_OF: Record<InstanceRole, LogSource[]> = { api: ["batch", "fhir"], worker: ["feed", "ingestion"], all: ["batch", "fhir", "feed", "ingestion"] };

/** What a state engine counts (actors/state-engine.ts's `stats`). */
export interface EngineCounts {
  readonly applied_logs: number;
  readonly replays: number;
  readonly failures: number;
}

/**
 * One process's metrics, in a registry of its own (no prom-client globals: tests build
 * several services in one process). Every series carries the process's `role` and `pid`,
 * so the series of the processes of one member never merge: sum them with
 * `sum without (pid)`. Counters the background work keeps itself (the engine's, the
 * projector's, the device feed's, the lease table's) are read at scrape time rather than
 * copied on each change, so those modules stay unaware of metrics.
 */
export class ProcessMetrics implements LogOutcomes {
  readonly registry = new Registry();
  private readonly registers = [this.registry];
  private readonly logsAccepted: Counter<"source">;
  private readonly logsRejected: Counter<"source" | "reason">;
  private readonly requests: Histogram<"method" | "route" | "status_class">;

  constructor(instance: InstanceStatus) {
    this.registry.setDefaultLabels({ role: instance.role, pid: String(instance.pid) });
    collectDefaultMetrics({ register: this.registry });
    const registers = this.registers;
    this.logsAccepted = new Counter({ name: "pss_logs_accepted_total", help: "Logs stored in the log stream, by where they came in (batch, feed, ingestion)", labelNames: ["source"], registers });
    // Present from the start at 0, so a rate over them is defined before the first log.
    for (const source of SOURCES_OF[instance.role]) this.logsAccepted.inc({ source }, 0);
    this.logsRejected = new Counter({ name: "pss_logs_rejected_total", help: "Logs refused by the write path, or not stored (storage_error), by source and error code", labelNames: ["source", "reason"], registers });
    this.requests = new Histogram({
      name: "pss_http_request_duration_seconds",
      help: "HTTP requests answered, by method, route pattern and status class, from the request's arrival to its answer",
      labelNames: ["method", "route", "status_class"],
      registers,
    });
    const leaseChanges: Counter<"kind"> = new Counter({
      name: "pss_lease_changes_total",
      help: "Leases this process acquired, lost (expired or taken by another member) and released (handed over or stopped)",
      labelNames: ["kind"],
      registers,
      collect: () => {
        const c = instance.leaseCounters();
        leaseChanges.reset();
        leaseChanges.inc({ kind: "acquired" }, c.acquisitions);
        leaseChanges.inc({ kind: "lost" }, c.losses);
        leaseChanges.inc({ kind: "released" }, c.releases);
      },
    });
    const leasesHeld: Gauge = new Gauge({ name: "pss_leases_held", help: "Leases this process holds now", registers, collect: () => leasesHeld.set(instance.leases().length) });
  }

  accepted(source: LogSource, n: number): void {
    if (n > 0) this.logsAccepted.inc({ source }, n);
  }

  rejected(source: LogSource, code: string, n: number): void {
    if (n > 0) this.logsRejected.inc({ source, reason: REJECT_REASONS.has(code) ? code : "other" }, n);
  }

  /**
   * One answered request. `route` is the pattern the router matched (`/v1/state/:pid`),
   * never the URL, so no identifier becomes a label value; `undefined` (nothing matched)
   * counts as `unmatched`.
   */
  observeRequest(method: string, route: string | undefined, statusCode: number, seconds: number): void {
    const labels = { method: METHODS.has(method) ? method : "other", route: route ?? "unmatched", status_class: `${Math.floor(statusCode / 100)}xx` };
    this.requests.observe(labels, seconds);
  }

  /** The state engine of this process: logs folded, replays, failed patient actors. */
  observeEngine(stats: EngineCounts): void {
    this.mirror("pss_logs_applied_total", "Logs folded into patients' states by the state engine (a replay folds the patient's whole history again)", () => stats.applied_logs);
    this.mirror("pss_replays_total", "Patients whose state the engine compiled again from their whole history (lost or outdated state, a failed actor, late logs)", () => stats.replays);
    this.mirror("pss_patient_actor_failures_total", "Patient actors that failed; their logs are delivered again and the patient replayed", () => stats.failures);
  }

  /** The ClickHouse projector of this process. */
  observeProjector(stats: { readonly rows: number }): void {
    this.mirror("pss_logs_projected_total", "Log rows the projector inserted into ClickHouse", () => stats.rows);
  }

  /** The device feed of this process. */
  observeDeviceFeed(stats: { readonly dead_lettered: number }): void {
    this.mirror("pss_feed_dead_letters_total", "Device-feed messages filed as dead letters", () => stats.dead_lettered);
  }

  /** This process's metrics with their values, for the process that answers a scrape. */
  json(): Promise<MetricJson[]> {
    return this.registry.getMetricsAsJSON();
  }

  /** A counter whose value is read from a running count at scrape time. */
  private mirror(name: string, help: string, read: () => number): void {
    const counter: Counter = new Counter({
      name,
      help,
      registers: this.registers,
      collect: () => {
        counter.reset();
        counter.inc(read());
      },
    });
  }
}
