import type { FastifyPluginAsync } from "fastify";
import { PROMETHEUS_CONTENT_TYPE } from "../../../infra/metrics/exposition.js";
import type { MemberObserver } from "../../observe.js";

/**
 * GET /metrics: the member's metrics in the Prometheus text format, without credentials,
 * as /healthz (docs/security.md, "Metrics"): its label values are route patterns, roles,
 * sources, error codes and consumer names, never an organization, project or patient.
 * Left out of the OpenAPI document: it is for Prometheus, not for the API's clients.
 */
export const metricsRoutes: FastifyPluginAsync<{ observer: MemberObserver }> = async (app, { observer }) => {
  app.get("/metrics", { config: { scope: false }, schema: { hide: true } }, async (_req, reply) => {
    const text = await observer.metrics();
    return reply.header("content-type", PROMETHEUS_CONTENT_TYPE).send(text);
  });
};
