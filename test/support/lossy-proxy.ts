import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

/**
 * What the proxy does with one request:
 * - "pass": forward it and relay the answer;
 * - "lose-answer": forward it (the service applies it), then cut the connection instead
 *   of answering, as a network failure after sending does;
 * - "502-after": forward it, then answer 502 as a failing gateway would;
 * - "stale": forward it and relay the answer with `x-pss-stale: true` added;
 * - a function: answer it from the script, without forwarding (the service never sees it).
 */
export type Step = "pass" | "lose-answer" | "502-after" | "stale" | ((res: ServerResponse) => void);

export interface LossyProxy {
  url: string;
  /** Requests that reached the proxy, optionally only those of a method and path prefix. */
  count(method?: string, pathPrefix?: string): number;
  close(): Promise<void>;
}

const body = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

/**
 * A proxy in front of a running service that loses or replaces answers as `plan` says.
 * `plan` gets the method, the path (without query) and how many earlier requests had
 * the same method and path. Service URLs in JSON answers (the upload URL) are rewritten
 * to the proxy, so the upload goes through it too.
 */
export async function lossyProxy(base: string, plan: (method: string, path: string, seen: number) => Step): Promise<LossyProxy> {
  const seen: { method: string; path: string }[] = [];
  let url = "";
  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? "GET";
    const path = (req.url ?? "/").split("?")[0]!;
    const step = plan(method, path, seen.filter((s) => s.method === method && s.path === path).length);
    seen.push({ method, path });
    const payload = await body(req);
    if (typeof step === "function") return step(res);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "connection", "content-length", "transfer-encoding"].includes(k))) as Record<string, string>;
    const up = await fetch(base + req.url, { method, headers, body: payload.length > 0 ? new Uint8Array(payload) : undefined });
    const type = up.headers.get("content-type") ?? "application/json";
    let text = Buffer.from(await up.arrayBuffer());
    if (type.includes("json")) text = Buffer.from(text.toString("utf8").split(base).join(url));
    if (step === "lose-answer") return void res.destroy();
    if (step === "502-after") {
      res.writeHead(502, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ error: true, status_code: 502, error_type: "server_error", message: "bad gateway", details: [], timestamp: new Date().toISOString() }));
    }
    const out: Record<string, string> = { "content-type": type };
    for (const h of ["x-pss-stale", "retry-after"]) if (up.headers.get(h)) out[h] = up.headers.get(h)!;
    if (step === "stale") out["x-pss-stale"] = "true";
    res.writeHead(up.status, out);
    res.end(text);
  };
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    count: (method, prefix) => seen.filter((s) => (method === undefined || s.method === method) && (prefix === undefined || s.path.startsWith(prefix))).length,
    close: () => new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** A scripted answer in the spec's error shape; `errorType` defaults to server_error for a 5xx or 429, else error. */
export const specAnswer = (status: number, headers: Record<string, string> = {}, details: unknown[] = [], errorType?: string) => (res: ServerResponse) => {
  const error_type = errorType ?? (status >= 500 || status === 429 ? "server_error" : "error");
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ error: true, status_code: status, error_type, message: `scripted ${status}`, details, timestamp: new Date().toISOString() }));
};
