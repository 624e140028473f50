import {
  ClientClosedError, ClientOfflineError, ConnectionTimeoutError, DisconnectsClientError, SocketClosedUnexpectedlyError, SocketTimeoutError,
  TimeoutError as RedisTimeoutError,
} from "redis";

/** node-redis's errors for a server it cannot reach or that did not answer in time (a command past its time-out included). */
const REDIS_DOWN = [ClientClosedError, ClientOfflineError, ConnectionTimeoutError, DisconnectsClientError, SocketClosedUnexpectedlyError, SocketTimeoutError, RedisTimeoutError];
/** nats.js's errors (by name) for a request or connection that got no answer. */
const NATS_DOWN = new Set(["TimeoutError", "ClosedConnectionError", "DrainingConnectionError", "ConnectionError", "NoRespondersError", "RequestError"]);

/**
 * Which backend a failure says is unreachable, if any: NATS (a request or publish that
 * timed out, a closed or reconnecting connection, no JetStream answering) or Redis (the
 * client closed or offline, a command past its time-out). Such failures are the service's
 * temporary state, not a bug: clients get 503 and retry, rather than a 500 that leaves
 * the outcome unknown. Errors Redis or JetStream answered with (a refused command) are not.
 */
export function backendUnavailable(err: unknown): "NATS" | "Redis" | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (REDIS_DOWN.some((c) => e instanceof c)) return "Redis";
    if (NATS_DOWN.has(e.name)) return "NATS";
    if (e.name === "JetStreamPublishError" && (e as { kind?: string }).kind !== "rejected") return "NATS";
  }
  return undefined;
}
