import type { Logger } from "pino";
import type { Config } from "../src/config.js";
import { createServices, type Services } from "./services.js";
import { buildApp } from "./http/app.js";
import { reportReady, stopOn } from "./lifecycle.js";
import { lowerOwnPriority, setIdleScheduling } from "./process-priority.js";
import { MemberObserver } from "./observe.js";
import { joinSiblings, type ProcessReport, type ReportKind } from "./process-reports.js";
import { serveMetrics } from "./metrics-server.js";

/** How a process was started: alone (`PSS_ROLE=api` or `worker`), or as a child of app/supervisor.ts. */
export interface MemberOptions {
  supervised: boolean;
}

/** What this process tells a sibling that answers /healthz or /metrics for the member. */
async function reportOf(services: Services, kind: ReportKind): Promise<ProcessReport> {
  const instance = services.instance.snapshot();
  return kind === "metrics" ? { instance, metrics: await services.metrics.json() } : { instance };
}

/**
 * An api process: HTTP and MCP with its own connections, no background work. It reaches
 * what the worker owns over NATS (log queries on embedded ClickHouse, job control,
 * "rebuild this patient"), and reads what the worker wrote in Redis.
 */
export async function runApi(config: Config, log: Logger): Promise<void> {
  const setClose = stopOn(log, ["SIGTERM", "SIGINT"]);
  const services = await createServices(config, "api", { log });
  const observer = new MemberObserver(services, joinSiblings((kind) => reportOf(services, kind), () => services.instance.snapshot()));
  const app = await buildApp(services, { loggerInstance: log, observer });
  let metricsServer: { close(): Promise<void> } | null = null;
  // Requests in flight are finished (Fastify's close), then the connections closed.
  setClose(async () => {
    await app.close();
    await metricsServer?.close();
    await services.close();
  });
  await app.listen({ port: config.port, host: config.host });
  if (config.metricsPort !== null) metricsServer = await serveMetrics(observer, config.metricsPort, config.host);
  log.info({ instance: services.instance }, "api process serving");
  reportReady();
}

/**
 * A worker process: the state engine, the ClickHouse projector with embedded ClickHouse
 * (served to api processes over NATS), the device feed and the ingestion job runner. No
 * HTTP. Under the supervisor of `PSS_ROLE=all` it first lowers its own scheduling priority,
 * so a busy fold yields the CPU to the api processes on the same machine: accepted logs then
 * wait in JetStream, not in an api process's event loop. Alone, with PSS_METRICS_PORT, it
 * serves /metrics and /healthz there (its only HTTP). It stops on the supervisor's
 * SIGTERM, after the api processes; the terminal's SIGINT (Ctrl-C reaches every process of
 * the group) does not stop it before them.
 */
export async function runWorker(config: Config, log: Logger, opts: MemberOptions): Promise<void> {
  const setClose = stopOn(log, opts.supervised ? ["SIGTERM"] : ["SIGTERM", "SIGINT"], opts.supervised ? ["SIGINT"] : []);
  if (opts.supervised) {
    const niceness = lowerOwnPriority(config.workerNiceness);
    const scheduler = config.workerScheduler === "idle" && setIdleScheduling(process.pid, true) ? "idle" : "normal";
    if (config.workerScheduler === "idle" && scheduler !== "idle") log.warn("SCHED_IDLE could not be set (is chrt from util-linux installed?): the worker runs at its niceness only");
    log.info({ niceness, scheduler }, "background work runs at a lower scheduling priority than the api processes");
  }
  const services = await createServices(config, "worker", { log });
  const siblings = joinSiblings((kind) => reportOf(services, kind), () => services.instance.snapshot());
  // Under a supervisor the api processes serve the member's metrics; alone, this process does.
  const metricsServer = !opts.supervised && config.metricsPort !== null ? await serveMetrics(new MemberObserver(services, siblings), config.metricsPort, config.host) : null;
  setClose(async () => {
    await metricsServer?.close();
    await services.close();
  });
  log.info({ instance: services.instance }, "worker process running the background work");
  reportReady();
}
