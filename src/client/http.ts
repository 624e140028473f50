import { errorFromResponse, NetworkError, parseRetryAfter, PssError, RateLimitError } from "./errors.js";

export type QueryValue = string | number | boolean | readonly string[] | undefined | null;

export interface TransportOptions {
  /** The service's address, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** Bearer credential: an API key, a JWT from /auth/token or a patient token. */
  credential?: string;
  /** Project id or slug sent as X-Project (org-wide keys only). */
  project?: string;
  /** Retries after the first attempt for 5xx, 429 and network failures. @default 3 */
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

export interface RequestOptions {
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
}

export interface Answer<T> {
  status: number;
  headers: Headers;
  data: T;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

/**
 * HTTP with the client's retry rules: 5xx, 429 and connection failures are retried with
 * exponential backoff and jitter (a Retry-After wins over the backoff); anything else
 * fails at once as a typed error. Retrying a POST is safe for the service's writes when
 * they carry idempotency keys, which is why the buffered logger adds them.
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
  async request<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    return (await this.send<T>(method, path, o)).data;
  }

  /** Status, headers and body (for callers that read headers such as x-pss-stale). */
  async send<T>(method: string, path: string, o: RequestOptions = {}): Promise<Answer<T>> {
    const url = this.url(path, o.query);
    const retries = o.retries ?? this.retries;
    for (let attempt = 0; ; attempt++) {
      const r = await this.once<T>(method, url, o);
      if (!("failure" in r)) return r;
      if (attempt >= retries) throw r.failure;
      const backoff = Math.min(this.maxRetryDelayMs, this.retryBaseMs * 2 ** attempt);
      // Jitter in [backoff/2, backoff): many clients failing together do not retry together.
      const delay = r.retryAfterMs ?? backoff / 2 + Math.random() * (backoff / 2);
      if (delay > this.maxRetryDelayMs) throw r.failure;
      await sleep(delay, o.signal);
    }
  }

  /** One attempt: the answer, a retryable failure, or a thrown final error. */
  private async once<T>(method: string, url: URL, o: RequestOptions): Promise<Answer<T> | { failure: PssError; retryAfterMs?: number }> {
    let res: Response;
    let data: unknown;
    try {
      res = await this.attempt(method, url, o);
      data = await readBody(res, res.ok ? (o.as ?? "json") : "json");
    } catch (err) {
      if (o.signal?.aborted) throw err; // The caller's own abort is not a failure to retry.
      return { failure: networkError(err, method, url, o.timeoutMs ?? this.timeoutMs) };
    }
    if (res.ok) return { status: res.status, headers: res.headers, data: data as T };
    const failure = errorFromResponse(res.status, data, res.headers);
    if (res.status !== 429 && res.status < 500) throw failure;
    const ra = failure instanceof RateLimitError ? failure.retryAfter : parseRetryAfter(res.headers.get("retry-after"));
    return ra === undefined ? { failure } : { failure, retryAfterMs: ra * 1000 };
  }

  private async attempt(method: string, url: URL, o: RequestOptions): Promise<Response> {
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

function networkError(err: unknown, method: string, url: URL, timeoutMs: number): NetworkError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  const where = `${method} ${url.origin}${url.pathname}`;
  if (e?.name === "TimeoutError") return new NetworkError(`${where}: no answer within ${timeoutMs} ms`, err);
  const why = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new NetworkError(`${where} failed: ${why}`, err);
}
