import fp from "fastify-plugin";
import rateLimit, { type FastifyRateLimitStoreCtor } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Principal } from "../../../src/auth/scopes.js";
import { BOOTSTRAP } from "../../../src/control/bootstrap.js";
import { AppError } from "../../../src/errors.js";
import type { Redis } from "../../../infra/redis/connection.js";
import type { Services } from "../../services.js";

/**
 * Longest a limit check may wait for Redis. Past it the request goes through
 * (skipOnError): node-redis queues commands while reconnecting, and the write path must
 * not stall behind a cache outage. @default 250 ms
 */
const STORE_TIMEOUT_MS = 250;

type IncrCallback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * A fixed-window counter per key in the service's own Redis (node-redis 5; the plugin's
 * built-in store wants ioredis). INCR, PEXPIRE NX and PTTL in one MULTI: the first
 * request of a window starts its clock, and a key somehow left without a TTL gets one.
 */
function redisStore(redis: Redis, prefix: string): FastifyRateLimitStoreCtor {
  class RedisCounter {
    private keyPrefix = prefix;

    incr(key: string, cb: IncrCallback, timeWindow?: number, _max?: number): void {
      const k = this.keyPrefix + key;
      const window = timeWindow ?? 60_000;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`rate-limit store: no Redis answer within ${STORE_TIMEOUT_MS} ms`)), STORE_TIMEOUT_MS);
      });
      Promise.race([redis.multi().incr(k).pExpire(k, window, "NX").pTTL(k).exec(), timeout])
        .then((r) => {
          const ttl = Number(r[2]);
          cb(null, { current: Number(r[0]), ttl: ttl > 0 ? ttl : window });
        })
        .catch((err: unknown) => cb(err instanceof Error ? err : new Error(String(err))))
        .finally(() => clearTimeout(timer));
    }

    child(routeOptions: { routeInfo?: { method?: string; url?: string } }): RedisCounter {
      const r = routeOptions.routeInfo;
      const child = new RedisCounter();
      if (r?.url) child.keyPrefix = `${this.keyPrefix}${r.method}${r.url}:`;
      return child;
    }
  }
  // The plugin calls `new Store(options)`; the options are not needed (incr gets the window).
  return RedisCounter as unknown as FastifyRateLimitStoreCtor;
}

/** The contract's 429: error_type server_error, a rate_limit detail with retry_after (s), and Retry-After. */
export function rateLimited(ttlMs: number, max: number, windowMs: number, per: "credential" | "address"): AppError {
  const retry_after = Math.max(1, Math.ceil(ttlMs / 1000));
  const whose = per === "credential" ? "for this credential's API key" : "from this address without a valid credential";
  const message = `rate limit exceeded: at most ${max} requests per ${Math.round(windowMs / 1000)} s ${whose}; retry in ${retry_after} s`;
  return new AppError("rate_limited", message, [{ type: "rate_limit", message, retry_after }], { headers: { "retry-after": String(retry_after) } });
}

/**
 * The operator's own credentials: the bootstrap key and the JWTs it signs in with (the
 * console's). A patient token minted from it is handed to a patient or an agent, and is
 * limited like any other.
 */
function isOperator(p: Principal | null): boolean {
  return p?.key_id === BOOTSTRAP.key_id && p.kind !== "patient_token";
}

/**
 * The bucket a request counts against: its API key (JWTs and patient tokens count
 * against the key they were minted from, so minting more tokens buys nothing), or its
 * IP address when it carries no credential.
 */
function bucketOf(req: FastifyRequest): string {
  const p = req.principal as Principal | null;
  return p ? `key:${p.key_id}` : `ip:${req.ip}`;
}

/**
 * Per-key rate limits (PSS_RATE_LIMIT_MAX requests per PSS_RATE_LIMIT_WINDOW_MS; 0 turns
 * them off) with @fastify/rate-limit and a Redis store, so every instance shares the counts.
 *
 * The plugin puts its check on each route as a route-level onRequest hook, and route-level
 * hooks run after the auth plugin's: the key is known when the limit is checked. Not
 * limited: /healthz and /metrics (probes and scrapes), and the bootstrap key (PSS_ADMIN_KEY) with
 * its JWTs, the operator's own credentials rather than a tenant's (isOperator).
 */
export const rateLimitPlugin = fp(
  async (app: FastifyInstance, opts: { services: Services }) => {
    const { rateLimitMax: max, rateLimitWindowMs: windowMs, namespace } = opts.services.config;
    if (max === 0) return;
    await app.register(rateLimit, {
      global: true,
      hook: "onRequest",
      max,
      timeWindow: windowMs,
      store: redisStore(opts.services.redis, `${namespace}:rl:`),
      skipOnError: true,
      keyGenerator: bucketOf,
      allowList: (req) => req.routeOptions.url === "/healthz" || req.routeOptions.url === "/metrics" || isOperator(req.principal as Principal | null),
      errorResponseBuilder: (req, ctx) => rateLimited(ctx.ttl, ctx.max, windowMs, req.principal ? "credential" : "address"),
    });

    // Failed authentications never reach the route-level check; they count per IP here.
    const failedAuth = app.createRateLimit({ keyGenerator: (req) => `authfail:${req.ip}`, max, timeWindow: windowMs });
    app.decorate("limitFailedAuth", async (req: FastifyRequest) => {
      const r = await failedAuth(req).catch(() => null);
      if (r && !r.isAllowed && r.isExceeded) throw rateLimited(r.ttl, r.max, windowMs, "address");
    });
  },
  { name: "rate-limit" },
);
