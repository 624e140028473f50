import { Registry, type Metric } from "prom-client";
import type { MetricJson } from "./process-metrics.js";

/** The Prometheus text format's content type (exposition format 0.0.4). */
export const PROMETHEUS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * The Prometheus text of metrics gathered from several processes (each part as one
 * process's getMetricsAsJSON gave it): one HELP and TYPE per name, every process's series
 * under it. Series are not summed: each carries its process's `role` and `pid`, so none
 * collide. (prom-client's AggregatorRegistry would sum them, and drop the metrics it
 * marks `omit`, such as each process's start time.)
 */
export async function renderMetrics(parts: readonly (readonly MetricJson[])[]): Promise<string> {
  const byName = new Map<string, MetricJson>();
  for (const part of parts) {
    for (const m of part) {
      const seen = byName.get(m.name);
      if (seen) seen.values.push(...m.values);
      else byName.set(m.name, { ...m, values: [...m.values] });
    }
  }
  const registry = new Registry();
  // Registry renders what a metric's get() answers; a gathered metric answers itself.
  for (const m of byName.values()) registry.registerMetric({ name: m.name, get: () => Promise.resolve(m) } as unknown as Metric);
  return registry.metrics();
}
