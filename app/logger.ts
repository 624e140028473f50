import type { FastifyRequest } from "fastify";
import { pino, type Logger, type LoggerOptions } from "pino";
import type { Role } from "../src/config.js";

/** Pino options; false silences logs (tests). `stream` sends the lines elsewhere than stdout. */
export type LoggerSetting = boolean | { level: string; stream?: { write(line: string): void } } | undefined;

/**
 * Never logged, whatever the level: bearer credentials and secrets in bodies (the
 * /auth/token key, a created key, a minted token). Fastify's request serializer does not
 * log headers or bodies today; this holds if someone logs them later.
 */
export const REDACT_PATHS = [
  "req.headers.authorization",
  "headers.authorization",
  "authorization",
  "api_key",
  "key",
  "access_token",
  "*.api_key",
  "*.key",
  "*.access_token",
  "*.authorization",
];

/**
 * Paths whose next segment is a credential: the one-time upload URL's token (valid until
 * spent, and a dropped upload leaves it unspent).
 */
const CREDENTIAL_SEGMENTS = /^(\/v1\/ingestion\/uploads\/)[^/]+/;

/**
 * A request URL as logs carry it: without the query string (it may carry identifiers of
 * patients, or a credential a client put there by mistake) and with credentials in the
 * path redacted.
 */
export function loggedUrl(url: string): string {
  return url.split("?")[0]!.replace(CREDENTIAL_SEGMENTS, "$1[redacted]");
}

/** The options of the service's pino loggers: the level, redaction, and a request serializer without the query string. */
export function loggerOptions(setting: LoggerSetting, level: string) {
  if (setting === false) return false;
  const base = setting === undefined || setting === true ? { level } : setting;
  return {
    ...base,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    serializers: {
      // Fastify's own, with the URL as loggedUrl gives it. Every line Fastify writes about a
      // request (incoming, aborted, failed) carries it through this serializer.
      req: (req: Partial<FastifyRequest>) => ({
        method: req.method,
        url: typeof req.url === "string" ? loggedUrl(req.url) : undefined,
        host: req.host,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
  };
}

/** What a process of `npm start` is, on each of its log lines: a role, or the supervisor of `PSS_ROLE=all`. */
export type ProcessKind = Role | "supervisor";

/**
 * A process's logger: the HTTP app's and its background work's (state engine, projector,
 * device feed, ingestion jobs), so every line is JSON at LOG_LEVEL with the same redaction,
 * and names the process's role, as several processes share one stdout.
 */
export function processLogger(level: string, role: ProcessKind): Logger {
  return pino(loggerOptions(undefined, level) as LoggerOptions).child({ role });
}
