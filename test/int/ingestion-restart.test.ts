import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createServices, type ServiceOptions, type Services } from "../../app/services.js";
import { buildApp } from "../../app/http/app.js";
import { LOG_MIX } from "../../bench/log-mix.js";
import { closeAndDrop } from "../support/stack.js";

interface Stack {
  ns: string;
  dataDir: string;
  adminKey: string;
  services: Services;
  app: FastifyInstance;
  /** Stops the service and keeps its namespace, as a crash or a deploy would. */
  stop(): Promise<void>;
  /** Stops it and removes the namespace. */
  destroy(): Promise<void>;
}

/**
 * Like test/support/stack.ts, plus `reuseNamespace`: a second service started on the
 * namespace (and data directory) of a stopped one, to see what survives a restart.
 */
async function startIngestionStack(opts: { reuseNamespace?: Pick<Stack, "ns" | "dataDir" | "adminKey">; ingestion?: ServiceOptions["ingestion"]; replayThread: boolean }): Promise<Stack> {
  const ns = opts.reuseNamespace?.ns ?? `t${randomBytes(5).toString("hex")}`;
  const dataDir = opts.reuseNamespace?.dataDir ?? mkdtempSync(join(tmpdir(), "pss-test-"));
  const adminKey = opts.reuseNamespace?.adminKey ?? `admin-${randomBytes(16).toString("hex")}`;
  const config = loadConfig({ PSS_NAMESPACE: ns, DATA_DIR: dataDir, PSS_ADMIN_KEY: adminKey, LOG_LEVEL: "silent", PSS_VIEW_DEBOUNCE_MS: "20", PSS_REPLAY_THREAD: opts.replayThread ? "1" : "0" });
  const services = await createServices(config, "all", { ingestion: opts.ingestion });
  const app = await buildApp(services, { logger: false });
  await app.ready();
  const stop = async () => {
    await app.close();
    await services.close();
  };
  return {
    ns,
    dataDir,
    adminKey,
    services,
    app,
    stop,
    destroy: () => closeAndDrop(app, services, ns, dataDir),
  };
}

const PATIENTS = 100;
const LOGS_PER_PATIENT = 12;

/** The same file for two prefixes: patients `${prefix}-i`, logs interleaved and newest first. */
function file(prefix: string) {
  const rows: unknown[] = [];
  for (let p = 0; p < PATIENTS; p++) rows.push({ type: "patient", data: { first_name: `P${p}`, external_identifiers: [{ system: "mrn", value: `${prefix}-${p}` }] } });
  for (let i = LOGS_PER_PATIENT - 1; i >= 0; i--) {
    for (let p = 0; p < PATIENTS; p++) {
      const m = LOG_MIX[(p + i) % LOG_MIX.length]!;
      rows.push({ type: "log", data: { event_type: m.log_type, patient_id: `${prefix}-${p}`, timestamp: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000 + p * 1000).toISOString(), payload: m.payload(i * 7 + p) } });
    }
  }
  return rows;
}

let live: Stack | null = null;
afterEach(async () => {
  await live?.destroy();
  live = null;
});

// Both places REPLAYING's writes can run: the job's own thread, and the replay thread
// (whose test hook crosses threads, and whose writes in flight a stop must abort).
describe.each([
  { where: "on the job's thread", replayThread: false },
  { where: "on the replay thread", replayThread: true },
])("an ingestion job interrupted in REPLAYING, written $where", ({ replayThread }) => {
  it("resumes after a restart and ends with the same patient state as an uninterrupted run", async () => {
    let slow: string | null = null;
    let chunks = 0;
    const first = await startIngestionStack({
      replayThread,
      // Slow fake chunks for the job under test only, so the service can be stopped
      // mid-replay. The first one is much slower: later buckets finish while it waits, so
      // at the stop some done buckets sit above the saved cursor (the restart must find
      // their logs in the history, not write them again). Small staging buckets make the
      // replay go in many steps, as a large file's would.
      ingestion: {
        bucketBytes: 8 * 1024,
        beforeReplayChunk: async (jobId) => {
          if (jobId === slow) await new Promise((r) => setTimeout(r, ++chunks === 1 ? 3_000 : 40));
        },
      },
    });
    live = first;
    const auth = { authorization: `Bearer ${first.adminKey}` };
    const post = (app: FastifyInstance, url: string, payload: unknown) => app.inject({ method: "POST", url, headers: auth, payload: payload as object });
    const get = (app: FastifyInstance, url: string) => app.inject({ method: "GET", url, headers: auth });
    const waitJob = async (app: FastifyInstance, id: string, done: (j: { status: string; logs_replayed: number }) => boolean) => {
      for (const end = Date.now() + 30_000; ; ) {
        const j = (await get(app, `/v1/ingestion/jobs/${id}`)).json();
        if (done(j) || Date.now() > end) return j;
        await new Promise((r) => setTimeout(r, 20));
      }
    };

    const straight = (await post(first.app, "/v1/ingestion/jobs", { require_confirmation: false, records: file("A") })).json().job_id;
    expect((await waitJob(first.app, straight, (j) => j.status === "completed")).status).toBe("completed");
    // V8's heap growth is capped only while a job works (infra/heap-growth-cap.ts).
    expect(first.services.jobRunner!.heapCapped).toBe(false);

    const interrupted = (await post(first.app, "/v1/ingestion/jobs", { records: file("B") })).json().job_id;
    slow = interrupted;
    await waitJob(first.app, interrupted, (j) => j.status === "awaiting_confirmation");
    await post(first.app, `/v1/ingestion/jobs/${interrupted}/confirm`, {});
    const midway = await waitJob(first.app, interrupted, (j) => j.logs_replayed >= 200);
    expect(midway).toMatchObject({ status: "replaying", stage: "REPLAYING" });
    expect(first.services.jobRunner!.heapCapped).toBe(true);
    expect(midway.logs_replayed).toBeLessThan(PATIENTS * LOGS_PER_PATIENT);
    await first.stop();
    live = null;

    const second = await startIngestionStack({ reuseNamespace: first, ingestion: { bucketBytes: 8 * 1024 }, replayThread });
    live = second;
    // Progress never goes back, though the resumed run recounts the buckets it finds written.
    const seen: number[] = [];
    const done = await waitJob(second.app, interrupted, (j) => {
      seen.push(j.logs_replayed);
      return !["replaying", "backfilling"].includes(j.status);
    });
    expect(seen[0]).toBeGreaterThanOrEqual(midway.logs_replayed);
    expect(seen.every((n, i) => i === 0 || n >= seen[i - 1]!), seen.join(" ")).toBe(true);
    expect(done).toMatchObject({ status: "completed", stage: "BACKFILLING", logs_processed: PATIENTS * LOGS_PER_PATIENT, logs_replayed: PATIENTS * LOGS_PER_PATIENT, logs_failed: 0, logs_duplicate: 0, backfill_status: "completed" });
    expect(second.services.jobRunner!.heapCapped).toBe(false);

    const idOf = async (value: string) => (await get(second.app, `/v1/patients?system=mrn&value=${value}`)).json().patients[0].id as string;
    /** Everything a client reads of the patient, with ids (which differ between the runs) blanked. */
    const stateOf = async (pid: string) => {
      const stable = (await get(second.app, `/v1/state/${pid}/stable`)).json().modules;
      const list = (await get(second.app, `/v1/state/${pid}/event-modules`)).json().modules as { module_type: string }[];
      const events: Record<string, unknown> = {};
      for (const m of list) events[m.module_type] = (await get(second.app, `/v1/state/${pid}/event-modules/${m.module_type}`)).json().payload;
      const logs = (await get(second.app, `/v1/state/${pid}/logs?limit=500`)).json();
      return JSON.parse(JSON.stringify({ stable, events, logs: logs.count }).replace(/(log|pat)_[0-9A-Z]{26}/g, "$1_X"));
    };
    for (let p = 0; p < PATIENTS; p += 7) {
      const [a, b] = [await stateOf(await idOf(`A-${p}`)), await stateOf(await idOf(`B-${p}`))];
      expect(b.logs, `patient ${p}: each log stored once`).toBe(LOGS_PER_PATIENT);
      expect(b, `patient ${p}`).toEqual(a);
    }
  });
});
