import { createServer, type Server } from "node:http";
import { PROMETHEUS_CONTENT_TYPE } from "../infra/metrics/exposition.js";
import type { MemberObserver } from "./observe.js";

/**
 * The HTTP of PSS_METRICS_PORT: GET /metrics and GET /healthz, the same answers as the
 * app's, and nothing else (404). It is the only HTTP a PSS_ROLE=worker process serves,
 * and lets an operator keep scrapes on a port apart from the API's. Plain node:http: it
 * has two routes and takes no body. Resolves once listening, with the port (`port` 0 picks
 * one) and what stops it.
 */
export async function serveMetrics(observer: MemberObserver, port: number, host: string): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    const answer = async (): Promise<{ status: number; type: string; body: string }> => {
      if (req.method !== "GET" && req.method !== "HEAD") return { status: 405, type: "application/json", body: JSON.stringify({ error: "only GET" }) };
      if (path === "/metrics") return { status: 200, type: PROMETHEUS_CONTENT_TYPE, body: await observer.metrics() };
      if (path === "/healthz") {
        const h = await observer.health();
        return { status: h.statusCode, type: "application/json", body: JSON.stringify(h.body) };
      }
      return { status: 404, type: "application/json", body: JSON.stringify({ error: "not found: this port serves GET /metrics and GET /healthz" }) };
    };
    answer().then(
      (a) => {
        res.writeHead(a.status, { "content-type": a.type });
        res.end(req.method === "HEAD" ? undefined : a.body);
      },
      (err: unknown) => {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: err instanceof Error ? err.message : String(err) }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
