import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * A nats-server of this test's own, with JetStream in a directory that outlives a stop,
 * so the outage is real: the server stops and comes back with the same streams.
 */
let nats: ChildProcess | undefined;
let port: number;
let storeDir: string;
let t: TestStack;
let pid: string;
const MCP_HEADERS = { accept: "application/json, text/event-stream", "content-type": "application/json" };

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });

const accepts = (p: number) =>
  new Promise<boolean>((resolve) => {
    const c = createConnection({ port: p, host: "127.0.0.1" }, () => (c.destroy(), resolve(true)));
    c.on("error", () => resolve(false));
  });

async function startNats(): Promise<void> {
  nats = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], { stdio: "ignore" });
  for (const until = Date.now() + 10_000; !(await accepts(port)); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > until) throw new Error("the private nats-server did not start");
  }
}

async function stopNats(): Promise<void> {
  const proc = nats;
  nats = undefined;
  if (!proc || proc.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    proc.once("exit", () => resolve());
    proc.kill("SIGTERM");
  });
}

/** A read of patient data that NATS need not serve (the patient record is cached): only its audit entry needs NATS. */
const readPatient = () => t.app.inject({ method: "GET", url: `/v1/patients/${pid}`, headers: t.auth });

beforeAll(async () => {
  port = await freePort();
  storeDir = mkdtempSync(join(tmpdir(), "pss-nats-"));
  await startNats();
  t = await startStack({ NATS_URL: `nats://127.0.0.1:${port}`, PSS_PUBLISH_TIMEOUT_MS: "500" });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  if (!nats) await startNats().catch(() => undefined);
  await t?.close();
  await stopNats();
  rmSync(storeDir, { recursive: true, force: true });
});

describe("audited answers during a NATS outage", () => {
  it("answers no read whose audit entry could not be stored (503 with the spec's body), REST or MCP, and audits each read once NATS is back", async () => {
    expect((await readPatient()).statusCode).toBe(200);
    await stopNats();

    const started = Date.now();
    const rest = await readPatient();
    expect(rest.statusCode).toBe(503);
    expect(rest.json()).toMatchObject({ error: true, status_code: 503, error_type: "server_error", details: [{ type: "audit_unavailable" }] });
    expect(rest.body).not.toContain(pid);
    const read = { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "org://log-types" } };
    const mcp = await t.app.inject({ method: "POST", url: "/mcp", headers: { ...t.auth, ...MCP_HEADERS }, payload: read });
    expect(mcp.statusCode).toBe(503);
    expect(mcp.json()).toMatchObject({ error: true, status_code: 503, details: [{ type: "audit_unavailable" }] });
    // Bounded by the publish time-out (500 ms here), not by the outage.
    expect(Date.now() - started).toBeLessThan(4_000);

    await startNats();
    let back = await readPatient();
    for (const until = Date.now() + 15_000; back.statusCode !== 200 && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) back = await readPatient();
    expect(back.statusCode).toBe(200);
    // An answer comes only after its entry is stored: the trail has it at once, without waiting.
    const reads = async () => {
      const r = await t.app.inject({ method: "GET", url: `/v1/audit?patient_id=${pid}&limit=1000`, headers: t.auth });
      return (r.json().entries as { method: string; route: string; status: number }[]).filter((e) => e.method === "GET" && e.route === "/v1/patients/:id" && e.status === 200).length;
    };
    const before = await reads();
    expect((await readPatient()).statusCode).toBe(200);
    expect(await reads()).toBe(before + 1);
  });
});
