import fp from "fastify-plugin";
import type { FastifyInstance, RouteOptions } from "fastify";
import { isClosedQuery, NoQueryParams } from "../query-params.js";

/**
 * Every API route's query string is closed (app/http/query-params.ts). A route that
 * declares none takes none; one that declares an open querystring stops the start, so a
 * route cannot drop a misspelt filter by omission. Register before any route.
 *
 * Routes without a credential (config.scope false: health, metrics, discovery documents,
 * the OpenAPI document, the console's files, the one-time upload URL, /auth/token) keep
 * taking any: probes, browsers and crawlers call them with parameters of their own
 * (cache-busters), and none of them filters anything a dropped parameter would widen.
 */
function close(route: RouteOptions): void {
  if ((route.config as { scope?: unknown } | undefined)?.scope === false) return;
  const querystring: unknown = route.schema?.querystring;
  if (querystring === undefined) {
    route.schema = { ...route.schema, querystring: NoQueryParams };
  } else if (!isClosedQuery(querystring)) {
    throw new Error(`route ${String(route.method)} ${route.url} declares an open querystring: declare it with QueryParams (app/http/query-params.ts), so a parameter it does not take is refused, not dropped`);
  }
}

export const closedQueriesPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook("onRoute", close);
  },
  { name: "closed-queries" },
);
