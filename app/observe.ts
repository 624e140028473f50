import { Gauge, Registry } from "prom-client";
import { ConsumerLag } from "../infra/metrics/consumer-lag.js";
import { renderMetrics } from "../infra/metrics/exposition.js";
import type { InstanceSnapshot } from "../infra/metrics/instance-status.js";
import type { Services } from "./services.js";
import { NO_SIBLINGS, type Siblings } from "./process-reports.js";

/** Longest /healthz waits for the supervisor to pass on what the other processes of the member last said they hold. */
const HEALTH_GATHER_MS = 500;
/** Longest /metrics waits for the other processes' metrics (Prometheus's own scrape time-out is 10 s by default). */
const METRICS_GATHER_MS = 2_000;
/** Longest one backend's check may take before /healthz calls it down. */
const PROBE_MS = 2_000;

export interface BackendStatus {
  status: "up" | "down";
  error?: string;
}

export type Backend = "nats" | "redis" | "clickhouse";

export interface Health {
  /** `ok`: every backend up; `degraded`: serving without a backend it can do without; `unavailable`: not serving. */
  status: "ok" | "degraded" | "unavailable";
  /** The backends that did not answer. */
  down: Backend[];
  nats: BackendStatus;
  redis: BackendStatus;
  clickhouse: BackendStatus;
  /** The process that answered. */
  instance: InstanceSnapshot;
  /** Every process of this member that answered: this one first, then its siblings under a supervisor. */
  processes: InstanceSnapshot[];
}

async function probe(check: () => Promise<unknown>): Promise<BackendStatus> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([check(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_MS / 1000} s`)), PROBE_MS)))]);
    return { status: "up" };
  } catch (err) {
    return { status: "down", error: (err as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a member tells operators, whichever port it answers on (the app's, or
 * PSS_METRICS_PORT): its health and its metrics. Under a supervisor the process that
 * answers speaks for its siblings too (the worker's counters, the leases it holds),
 * gathered through the supervisor (app/process-reports.ts).
 */
export class MemberObserver {
  private readonly lag: ConsumerLag;
  private readonly own = new Registry();
  private readonly missing: Gauge;

  constructor(
    private readonly s: Services,
    private readonly siblings: Siblings = NO_SIBLINGS,
  ) {
    this.lag = new ConsumerLag(s.topology.jsm, [s.topology.names.logsStream, s.topology.names.ingestStream]);
    this.missing = new Gauge({ name: "pss_scrape_missing_processes", help: "Processes of this member whose metrics did not come within 2 s for this scrape (their series are absent from it)", registers: [this.own] });
  }

  /**
   * Whether this process serves, and what each backend says. An api process can do without
   * ClickHouse: it is the log query's store, owned by the worker (which a restart takes away
   * for a while) or a server of its own, and writes and state reads go on without it. The
   * contract answers 503 whenever a backend is down, so the status code stays 503 then, and
   * the body says `degraded` (only the log query is refused) where it would say
   * `unavailable` without NATS or Redis, or in a process that owns ClickHouse.
   */
  async health(): Promise<{ statusCode: 200 | 503; body: Health }> {
    const s = this.s;
    const [nats, redis, clickhouse, gathered] = await Promise.all([
      probe(() => s.nc.rtt()),
      probe(() => s.redis.ping()),
      probe(() => s.clickhouse.ping()),
      this.siblings.gather("instance", HEALTH_GATHER_MS),
    ]);
    const backends = { nats, redis, clickhouse };
    const down = (Object.keys(backends) as Backend[]).filter((b) => backends[b].status === "down");
    const needed = down.filter((b) => b !== "clickhouse" || s.instance.role !== "api");
    const status = down.length === 0 ? "ok" : needed.length === 0 ? "degraded" : "unavailable";
    const instance = s.instance.snapshot();
    const siblings = gathered.parts.flatMap((p) => (p.instance ? [p.instance] : [])).sort((a, b) => a.pid - b.pid);
    return { statusCode: down.length === 0 ? 200 : 503, body: { status, down, nats, redis, clickhouse, instance, processes: [instance, ...siblings] } };
  }

  /** The member's metrics in the Prometheus text format: this process's, its siblings', and the consumers' lag. */
  async metrics(): Promise<string> {
    const [own, gathered, lag] = await Promise.all([this.s.metrics.json(), this.siblings.gather("metrics", METRICS_GATHER_MS), this.lag.json()]);
    this.missing.set(gathered.missing);
    return renderMetrics([own, ...gathered.parts.flatMap((p) => (p.metrics ? [p.metrics] : [])), lag, await this.own.getMetricsAsJSON()]);
  }
}
