import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { ProcessMetrics } from "../../../infra/metrics/process-metrics.js";

/**
 * Times every answered request into pss_http_request_duration_seconds, labelled with the
 * route's pattern (`/v1/state/:pid`), never its URL: ids stay out of the labels. A request
 * no route matched counts as `unmatched`.
 */
export const requestMetricsPlugin = fp(
  async (app: FastifyInstance, opts: { metrics: ProcessMetrics }) => {
    app.addHook("onResponse", async (req, reply) => {
      opts.metrics.observeRequest(req.method, req.routeOptions.url, reply.statusCode, reply.elapsedTime / 1_000);
    });
  },
  { name: "request-metrics" },
);
