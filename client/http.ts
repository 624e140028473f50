import { errorFromResponse, NetworkError, parseRetryAfter, PssError, RateLimitError } from "./errors.js";

export type QueryValue = string | number | boolean | readonly string[] | undefined | null;

export interface TransportOptions {
  /** The service's address, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** Bearer credential: an API key, a JWT from /auth/token or a patient token. */
  credential?: string;
  /** Project id or slug sent as X-Project (org-wide keys only). */
  project?: string;
  /** Retries after the first attempt for 5xx, 429 and network failures (for writes, see RequestOptions.idempotent). @default 3 */
  retries?: number;
  /** Time limit of one attempt, answer body included. @default 30_000 (30 s) */
  timeoutMs?: number;
  /** First backoff delay; each retry doubles it, with jitter. @default 250 ms */
  retryBaseMs?: number;
  /** Longest wait between attempts; a Retry-After beyond it ends the retries at once. @default 30_000 (30 s) */
  maxRetryDelayMs?: number;
  /** A fetch implementation (tests, proxies). @default globalThis.fetch */
  fetch?: typeof fetch;
}

export interface RequestOptions<T = unknown> {
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  body?: unknown;
  /** A raw body, made afresh for each attempt (a file stream cannot be replayed). */
  rawBody?: () => BodyInit;
  headers?: Record<string, string>;
  /** How to read a 2xx answer. @default "json" */
  as?: "json" | "text";
  /** Overrides the transport's retries for this call. */
  retries?: number;
  /** Overrides the per-attempt time limit; 0 means none (long uploads). */
  timeoutMs?: number;
  /** Send the bearer credential and X-Project. @default true */
  auth?: boolean;
  signal?: AbortSignal;
  /**
   * Sending the request twice has the effect of sending it once, so it may be retried
   * after a failure that leaves unknown whether the service applied it (a 5xx, a time-out,
   * a connection lost after sending). Other requests are retried only after failures
   * that prove nothing was applied (429, refused connection, ...; see `provedNotApplied`).
   * @default true for GET, HEAD, PUT, DELETE and OPTIONS; false otherwise
   */
  idempotent?: boolean;
  /**
   * Called with the final error when an earlier attempt may have been applied: the
   * retry's error may be that attempt's doing (a 409 for a confirm that took effect, a
   * 404 for a delete that did). Resolves to the answer the call should give, or
   * undefined to throw the error.
   */
  afterUncertainRetry?: (err: PssError) => Promise<T | undefined>;
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  data: T;
}

const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]);

/** Connection failures before any byte of the request went out. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

/** Failures the transport knows were not applied by the service (so a write may be sent again). */
const notApplied = new WeakSet<PssError>();

/**
 * Whether the service certainly did not apply the failed request: a 429 (the limit is
 * checked before the route runs), a 503 with Retry-After or the batch route's "nothing
 * was stored" 503, or a connection that failed before the request was sent.
 */
export const provedNotApplied = (err: unknown): boolean => err instanceof PssError && notApplied.has(err);

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    // Rejects with the abort's own reason, whatever the caller gave, as fetch does.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

/**
 * HTTP with the client's retry rules: 5xx, 429 and connection failures are retried with
 * exponential backoff and jitter (a Retry-After wins over the backoff); anything else
 * fails at once as a typed error. As in Stripe's clients, a request that is not
 * idempotent (a POST that creates something) is retried only when the failure proves it
 * was not applied: sending it again after a lost answer could apply it twice, or answer
 * a 409 for a write that succeeded.
 */
export class Transport {
  readonly baseUrl: string;
  credential: string | undefined;
  readonly project: string | undefined;
  private readonly retries: number;
  private readonly timeoutMs: number;
  private readonly retryBaseMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(o: TransportOptions) {
    this.baseUrl = o.baseUrl.replace(/\/+$/, "");
    this.credential = o.credential;
    this.project = o.project;
    this.retries = o.retries ?? 3;
    this.timeoutMs = o.timeoutMs ?? 30_000;
    this.retryBaseMs = o.retryBaseMs ?? 250;
    this.maxRetryDelayMs = o.maxRetryDelayMs ?? 30_000;
    this.fetchImpl = o.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** A path or absolute URL with its query string (list values comma-joined, empty ones left out). */
  url(path: string, query?: Record<string, QueryValue>): URL {
    const u = new URL(/^https?:\/\//.test(path) ? path : this.baseUrl + path);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      const s = Array.isArray(v) ? v.join(",") : String(v);
      if (s !== "") u.searchParams.set(k, s);
    }
    return u;
  }

  /** The answer's body, or a typed error. */
  async request<T>(method: string, path: string, o: RequestOptions<T> = {}): Promise<T> {
    return (await this.send<T>(method, path, o)).data;
  }

  /** Status, headers and body (for callers that read headers such as x-pss-stale). */
  async send<T>(method: string, path: string, o: RequestOptions<T> = {}): Promise<Answer<T>> {
    const url = this.url(path, o.query);
    const retries = o.retries ?? this.retries;
    const idempotent = o.idempotent ?? IDEMPOTENT_METHODS.has(method.toUpperCase());
    // Set once a retried attempt may have been applied (its answer was lost or a 5xx).
    let uncertain = false;
    for (let attempt = 0; ; attempt++) {
      const r = await this.once<T>(method, url, o);
      if (!("failure" in r)) return r;
      const again = r.retryable && attempt < retries && (idempotent || r.notApplied);
      const delay = again ? this.retryDelay(attempt, r.retryAfterMs) : undefined;
      if (delay === undefined) {
        const data = uncertain && o.afterUncertainRetry ? await o.afterUncertainRetry(r.failure) : undefined;
        if (data !== undefined) return { status: 200, headers: new Headers(), data };
        throw r.failure;
      }
      if (!r.notApplied) uncertain = true;
      await sleep(delay, o.signal);
    }
  }

  /** The wait before retry number `attempt` (from 0), or undefined when a Retry-After is over maxRetryDelayMs. */
  retryDelay(attempt: number, retryAfterMs?: number): number | undefined {
    const backoff = Math.min(this.maxRetryDelayMs, this.retryBaseMs * 2 ** attempt);
    // Jitter in [backoff/2, backoff): many clients failing together do not retry together.
    const delay = retryAfterMs ?? backoff / 2 + Math.random() * (backoff / 2);
    return delay > this.maxRetryDelayMs ? undefined : delay;
  }

  /** One attempt: the answer, or a failure saying whether it may be retried and whether it was certainly not applied. */
  private async once<T>(method: string, url: URL, o: RequestOptions<T>): Promise<Answer<T> | { failure: PssError; retryable: boolean; notApplied: boolean; retryAfterMs?: number }> {
    let res: Response;
    let data: unknown;
    try {
      res = await this.attempt(method, url, o);
      data = await readBody(res, res.ok ? (o.as ?? "json") : "json");
    } catch (err) {
      if (o.signal?.aborted) throw err; // The caller's own abort is not a failure to retry.
      const failure = networkError(err, method, url, o.timeoutMs ?? this.timeoutMs);
      const unsent = notSent(err);
      if (unsent) notApplied.add(failure);
      return { failure, retryable: true, notApplied: unsent };
    }
    if (res.ok) return { status: res.status, headers: res.headers, data: data as T };
    const failure = errorFromResponse(res.status, data, res.headers);
    if (res.status !== 429 && res.status < 500) return { failure, retryable: false, notApplied: false };
    const ra = failure instanceof RateLimitError ? failure.retryAfter : parseRetryAfter(res.headers.get("retry-after"));
    const unapplied = res.status === 429 || (res.status === 503 && (ra !== undefined || failure.details.some((d) => d.type === "storage_error")));
    if (unapplied) notApplied.add(failure);
    return { failure, retryable: true, notApplied: unapplied, ...(ra === undefined ? {} : { retryAfterMs: ra * 1000 }) };
  }

  private async attempt(method: string, url: URL, o: RequestOptions<unknown>): Promise<Response> {
    const headers: Record<string, string> = { accept: "application/json, text/markdown;q=0.9, */*;q=0.5", ...o.headers };
    if (o.auth !== false) {
      if (this.credential !== undefined) headers.authorization = `Bearer ${this.credential}`;
      if (this.project !== undefined) headers["x-project"] = this.project;
    }
    let body: BodyInit | undefined;
    if (o.rawBody) body = o.rawBody();
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] = "application/json";
    }
    const timeout = o.timeoutMs ?? this.timeoutMs;
    const signals = [...(timeout > 0 ? [AbortSignal.timeout(timeout)] : []), ...(o.signal ? [o.signal] : [])];
    const init: RequestInit & { duplex?: "half" } = { method, headers, body, signal: signals.length > 0 ? AbortSignal.any(signals) : undefined };
    // Node's fetch streams a request body only in half-duplex mode.
    if (body instanceof ReadableStream) init.duplex = "half";
    return this.fetchImpl(url, init);
  }
}

async function readBody(res: Response, as: "json" | "text"): Promise<unknown> {
  if (res.status === 204) return undefined;
  const text = await res.text();
  if (as === "text") return text;
  if (text === "") return undefined;
  const type = res.headers.get("content-type") ?? "";
  if (!type.includes("json")) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Whether fetch failed before sending: undici puts the socket error (or several, one per address) in `cause`. */
function notSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string; errors?: { code?: string }[] } })?.cause;
  if (cause?.code !== undefined) return NOT_SENT_CODES.has(cause.code);
  return Array.isArray(cause?.errors) && cause.errors.length > 0 && cause.errors.every((e) => e?.code !== undefined && NOT_SENT_CODES.has(e.code));
}

function networkError(err: unknown, method: string, url: URL, timeoutMs: number): NetworkError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const where = `${method} ${url.origin}${url.pathname}`;
  if (e?.name === "TimeoutError") return new NetworkError(`${where}: no answer within ${timeoutMs} ms`, err);
  const why = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new NetworkError(`${where} failed: ${why}`, err);
}
