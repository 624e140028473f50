import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PatientStateClient } from "../../client/index.js";
import { startCliStack, type Cli, type CliStack } from "../support/cli.js";
import { lossyProxy } from "../support/lossy-proxy.js";
import type { TestStack } from "../support/stack.js";

// The pss commands that run the service rather than read its patient data: keys, projects,
// login and ingestion jobs. --help and writing and reading data are in cli-data.test.ts.
let close: CliStack["close"] | undefined;
let t: TestStack;
let base: string;
let dir: string;
let pss: PatientStateClient;
let cli: Cli;

beforeAll(async () => {
  ({ t, base, dir, pss, cli, close } = await startCliStack());
});
afterAll(async () => {
  await close?.();
});

describe("pss command-line tool", () => {
  it("creates, lists and revokes API keys", async () => {
    const created = await cli(["keys", "create", "--name", "cli-bot", "--scope", "sdk:event-log,sdk:state-read", "--json"]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ name: "cli-bot", scopes: ["sdk:event-log", "sdk:state-read"], key: expect.any(String) });
    const listed = await cli(["keys", "list"]);
    expect(listed.stdout).toMatch(new RegExp(`${key.id}\\s+cli-bot\\s+sdk:event-log,sdk:state-read`));
    const revoked = await cli(["keys", "revoke", key.id]);
    expect(revoked).toMatchObject({ code: 0, stdout: expect.stringContaining(`revoked ${key.id}`) });
    const denied = await cli(["keys", "list"], { env: { PSS_API_KEY: key.key } });
    expect(denied.code).toBe(1);
  });

  it("manages projects by slug", async () => {
    const created = await cli(["projects", "create", "Cli Study", "--slug", "cli-study", "--json"]);
    expect(JSON.parse(created.stdout)).toMatchObject({ slug: "cli-study", status: "active" });
    const [list, got, defaultDeprecate] = await Promise.all([cli(["projects", "list"]), cli(["projects", "get", "cli-study"]), cli(["projects", "deprecate", "default"])]);
    expect(list.stdout).toMatch(/cli-study\s+Cli Study\s+active/);
    expect(got.stdout).toMatch(/slug\s+cli-study/);
    expect(defaultDeprecate.code).toBe(1);
    expect(defaultDeprecate.stderr).toContain("409 conflict_error");
    expect((await cli(["projects", "deprecate", "cli-study"])).stdout).toMatch(/status\s+deprecated/);
    expect((await cli(["projects", "restore", "cli-study"])).stdout).toMatch(/status\s+active/);
  });

  it("sets description and environment, duplicates a project, and deletes one only with --yes once deprecated", async () => {
    const created = await cli(["projects", "create", "Cli Env", "--slug", "cli-env", "--description", "for the CLI", "--environment", "dev", "--json"]);
    expect(JSON.parse(created.stdout)).toMatchObject({ slug: "cli-env", description: "for the CLI", environment: "dev" });
    const updated = await cli(["projects", "update", "cli-env", "--environment", "", "--json"]);
    expect(JSON.parse(updated.stdout)).toMatchObject({ description: "for the CLI", environment: null });
    const dup = await cli(["projects", "duplicate", "cli-env", "Cli Env Prod", "--environment", "prod", "--json"]);
    expect(JSON.parse(dup.stdout)).toMatchObject({ slug: "cli-env-prod", description: "for the CLI", environment: "prod", status: "active" });
    const unconfirmed = await cli(["projects", "delete", "cli-env"]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("--yes");
    const active = await cli(["projects", "delete", "cli-env", "--yes"]);
    expect(active.code).toBe(1);
    expect(active.stderr).toContain("409 conflict_error");
    await cli(["projects", "deprecate", "cli-env"]);
    expect(await cli(["projects", "delete", "cli-env", "--yes"])).toMatchObject({ code: 0, stdout: "deleted cli-env\n" });
    expect((await cli(["projects", "get", "cli-env"])).code).toBe(1);
  });

  it("logs in: stores a JWT 0600 under XDG_CONFIG_HOME that later commands use, and logs out", async () => {
    const none = await cli(["projects", "list"], { env: { PSS_API_KEY: "" } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("pss login");
    const login = await cli(["login", "--api-key", t.adminKey], { env: { PSS_API_KEY: "" } });
    expect(login.code).toBe(0);
    const file = join(dir, "config", "pss", "credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, "utf8"));
    expect(stored.logins[base]).toMatchObject({ url: base, access_token: expect.stringMatching(/^ey/) });
    expect(readFileSync(file, "utf8")).not.toContain(t.adminKey);
    const viaLogin = await cli(["projects", "list", "--json"], { env: { PSS_API_KEY: "" } });
    expect(viaLogin.code).toBe(0);
    expect(JSON.parse(viaLogin.stdout).map((p: { slug: string }) => p.slug)).toContain("default");
    expect((await cli(["logout"])).stdout).toContain("Logged out");
    expect((await cli(["projects", "list"], { env: { PSS_API_KEY: "" } })).code).toBe(2);
  });

  it("ingests a file: upload progress, follow, confirm with --yes or leave it awaiting with --no-confirm", async (ctx) => {
    if (!t.app.hasRoute({ method: "POST", url: "/v1/ingestion/jobs" })) ctx.skip();
    const file = join(dir, "history.jsonl");
    const rows = [
      { type: "patient", data: { first_name: "Hist", external_identifiers: [{ system: "mrn", value: "CLI-H1" }] } },
      { type: "log", data: { event_type: "user_login", patient_id: "CLI-H1", timestamp: "2026-01-01T10:00:00Z", payload: {} } },
    ];
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    await pss.projects.create({ name: "Cli ingest", slug: "cli-ingest" });
    const [yes, wait] = await Promise.all([
      cli(["ingest", file, "--yes", "--interval-ms", "100"]),
      cli(["ingest", file, "--no-confirm", "--interval-ms", "100", "--project", "cli-ingest"]),
    ]);
    expect(yes.stderr).toMatch(/upload \[#+\] 100%/);
    expect(yes).toMatchObject({ code: 0, stdout: expect.stringMatching(/ completed\n$/) });
    expect(wait).toMatchObject({ code: 0, stderr: expect.stringContaining("Left awaiting confirmation") });
    const jobId = /job (job_\w+) created/.exec(wait.stderr)![1]!;
    const listed = await cli(["jobs", "list", "--project", "cli-ingest"]);
    expect((await cli(["jobs", "cancel", jobId, "--rollback", "--no-rollback", "--project", "cli-ingest"])).code).not.toBe(0);
    // The job was made without rollback_on_cancel: --rollback decides for this cancel.
    const cancelled = await cli(["jobs", "cancel", jobId, "--rollback", "--project", "cli-ingest", "--json"]);
    expect(listed.stdout).toMatch(new RegExp(`${jobId}\\s+awaiting_confirmation`));
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ job_id: jobId, rollback_on_cancel: true, patients_rolled_back: 1 });
  });

  it("reviews a job: finds it by key and status a page at a time, takes a patient out, and skips its view backfill", async (ctx) => {
    if (!t.app.hasRoute({ method: "PATCH", url: "/v1/ingestion/jobs/:id" })) ctx.skip();
    const login = (ref: string) => ({ type: "log" as const, data: { event_type: "user_login", patient_id: ref, timestamp: "2026-01-03T10:00:00Z", payload: {} } });
    const created = await pss.ingestion.createJob({
      idempotency_key: "cli-review-1",
      records: [
        { type: "patient", data: { first_name: "Stay", external_identifiers: [{ system: "mrn", value: "CLI-R1" }] } },
        { type: "patient", data: { first_name: "Go", external_identifiers: [{ system: "mrn", value: "CLI-R2" }] } },
        login("CLI-R1"), login("CLI-R2"),
      ],
    });
    await pss.ingestion.waitForJob(created.job_id, { intervalMs: 50, timeoutMs: 20_000 });
    const gone = (await pss.patients.findByExternalId("mrn", "CLI-R2"))!.id;
    const listed = await cli(["jobs", "list", "--status", "awaiting_confirmation", "--idempotency-key", "cli-review-1", "--page-size", "1", "--json"]);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total: 1, page_size: 1, jobs: [{ job_id: created.job_id }] });
    const removed = await cli(["jobs", "remove-patient", created.job_id, gone, "--json"]);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ patients_removed: 1, logs_removed: 1, logs_processed: 1 });
    const patched = await cli(["jobs", "patch", created.job_id, "--skip-backfill", "--json"]);
    expect(JSON.parse(patched.stdout)).toMatchObject({ skip_backfill: true, backfill_status: "skipped" });
    expect((await cli(["jobs", "patch", created.job_id])).code).toBe(2);
    await pss.ingestion.cancel(created.job_id);
  });

  it("ingest --yes survives lost answers to its job create and its confirm: one job, completed, exit 0", async (ctx) => {
    if (!t.app.hasRoute({ method: "POST", url: "/v1/ingestion/jobs" })) ctx.skip();
    const file = join(dir, "lossy.jsonl");
    const rows = [
      { type: "patient", data: { first_name: "Lossy", external_identifiers: [{ system: "mrn", value: "CLI-L1" }] } },
      { type: "log", data: { event_type: "user_login", patient_id: "CLI-L1", timestamp: "2026-01-03T10:00:00Z", payload: {} } },
    ];
    writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    await pss.projects.create({ name: "Cli lossy", slug: "cli-lossy" });
    const proxy = await lossyProxy(base, (m, p, seen) => (m === "POST" && (p === "/v1/ingestion/jobs" || p.endsWith("/confirm")) && seen === 0 ? "lose-answer" : "pass"));
    try {
      const r = await cli(["ingest", file, "--yes", "--interval-ms", "100", "--project", "cli-lossy"], { env: { PSS_URL: proxy.url } });
      expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(/ completed\n$/) });
      expect(proxy.count("POST", "/v1/ingestion/jobs")).toBeGreaterThanOrEqual(4);
      const jobs = (await new PatientStateClient({ baseUrl: base, apiKey: t.adminKey, project: "cli-lossy" }).ingestion.listJobs()).jobs;
      expect(jobs).toHaveLength(1);
      expect(jobs[0]).toMatchObject({ status: "completed", idempotency_key: expect.stringMatching(/^pss-ingest-/) });
    } finally {
      await proxy.close();
    }
  });
});
