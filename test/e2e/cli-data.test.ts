import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PatientStateClient } from "../../client/index.js";
import { startCliStack, type Cli, type CliStack } from "../support/cli.js";

// pss --help, and the commands that write and read patient data: validate, logs send, state,
// query and fhir send. Keys, projects, login and ingestion jobs are in cli-admin.test.ts.
let close: CliStack["close"] | undefined;
let dir: string;
let pss: PatientStateClient;
let cli: Cli;
let pid: string;

const symptom = (patient: string, day: number, score: number) => ({
  log_type: "symptom_report",
  patient_id: patient,
  timestamp: `2026-07-0${day}T08:00:00Z`,
  payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] },
});

beforeAll(async () => {
  ({ dir, pss, cli, close } = await startCliStack());
  pid = (await pss.patients.create({ first_name: "Cli" })).id;
});
afterAll(async () => {
  await close?.();
});

describe("pss command-line tool", () => {
  it("explains itself with --help and refuses unknown commands and options", async () => {
    const [main, query, unknown, badOpt] = await Promise.all([cli(["--help"]), cli(["query", "--help"]), cli(["frobnicate"]), cli(["keys", "list", "--bogus"])]);
    expect(main.code).toBe(0);
    for (const c of ["validate", "ingest", "query", "logs", "state", "keys", "projects", "login"]) expect(main.stdout).toContain(`  ${c}`);
    expect(query.code).toBe(0);
    expect(query.stdout).toContain("--where EXPR");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command");
    expect(badOpt.code).toBe(2);
    expect(badOpt.stderr).toMatch(/Unknown option '--bogus'/);
  });

  it("documents exit code 3 and the order of state pages in --help", async () => {
    const [main, jobs, state] = await Promise.all([cli(["--help"]), cli(["jobs", "--help"]), cli(["state", "--help"])]);
    expect(main.stdout).toMatch(/3 an ingestion job completed with errors/);
    expect(jobs.stdout).toMatch(/jobs wait: .*\n?.*3 completed with errors/);
    expect(state.stdout).toMatch(/logs newest first, events \(what each applied log changed\) oldest first/);
    expect(state.stdout).toContain("--cursor C");
    expect(state.stdout).not.toContain("per page (newest first)");
  });

  it("validates a JSONL file offline: exit 0 when valid, 1 with each bad line", async () => {
    const good = join(dir, "good.jsonl");
    const bad = join(dir, "bad.jsonl");
    const patient = { type: "patient", data: { first_name: "Ada", timezone: "Europe/London", external_identifiers: [{ system: "mrn", value: "A-1" }] } };
    const log = (score: number) => ({ type: "log", data: { ...symptom("A-1", 1, score), event_type: "symptom_report", log_type: undefined } });
    writeFileSync(good, [patient, log(4)].map((r) => JSON.stringify(r)).join("\n") + "\n");
    writeFileSync(bad, [JSON.stringify(patient), JSON.stringify(log(99)), "{not json"].join("\n") + "\n");
    const [ok, ko, missing] = await Promise.all([cli(["validate", good], { env: { PSS_API_KEY: "" } }), cli(["validate", bad, "--json"]), cli(["validate"])]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("valid (2 lines, 1 patients, 1 logs)");
    expect(ko.code).toBe(1);
    const report = JSON.parse(ko.stdout);
    expect(report).toMatchObject({ valid: false, lines: 3, patients: 1 });
    expect(report.errors.map((e: { line: number }) => e.line)).toEqual([2, 3]);
    expect(missing.code).toBe(2);
    // Two files: the second would go unchecked, so it is a usage error, not a pass.
    const two = await cli(["validate", good, bad]);
    expect(two).toMatchObject({ code: 2, stderr: expect.stringContaining(`unexpected argument ${JSON.stringify(bad)}`) });
  });

  it("refuses what no command takes: a second file, an unknown jobs subcommand, page 0, a batch size over the service's", async () => {
    const [ingest, frob, page, size] = await Promise.all([
      cli(["ingest", "a.jsonl", "b.jsonl"]), cli(["jobs", "frob"]), cli(["jobs", "list", "--page", "0"]),
      cli(["logs", "send", "-", "--batch-size", "6000"], { input: JSON.stringify(Array.from({ length: 5_001 }, () => symptom(pid, 1, 2))) }),
    ]);
    expect(ingest).toMatchObject({ code: 2, stderr: expect.stringContaining('unexpected argument "b.jsonl"') });
    expect(frob).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown subcommand jobs frob: use one of list, get") });
    expect(page).toMatchObject({ code: 2, stderr: expect.stringContaining("--page must be at least 1") });
    expect(size).toMatchObject({ code: 2, stderr: expect.stringContaining("--batch-size 6000 is over the service's 5000 logs per batch") });
    // Admin commands too: `revoke A B` would revoke A alone, `login KEY` would ignore the key.
    const [revoke, get, login, logout] = await Promise.all([
      cli(["keys", "revoke", "key_a", "key_b"]), cli(["projects", "get", "default", "other"]), cli(["login", "secret-key-value"]), cli(["logout", "x"]),
    ]);
    expect(revoke).toMatchObject({ code: 2, stderr: expect.stringContaining('unexpected argument "key_b": see pss keys --help') });
    expect(get).toMatchObject({ code: 2, stderr: expect.stringContaining('unexpected argument "other"') });
    expect(login.code).toBe(2);
    expect(login.stderr).toContain("pss login takes no argument");
    expect(login.stderr).not.toContain("secret-key-value");
    expect(logout).toMatchObject({ code: 2, stderr: expect.stringContaining("pss logout takes no argument") });
  });

  it("validates as the service would: an empty file fails with empty_file, an undeclared patient is unknown_patient", async () => {
    const empty = join(dir, "empty.jsonl");
    const blank = join(dir, "blank.jsonl");
    const orphan = join(dir, "orphan.jsonl");
    writeFileSync(empty, "");
    writeFileSync(blank, "\n\n  \n");
    writeFileSync(orphan, JSON.stringify({ type: "log", data: { event_type: "user_login", patient_id: "MRN-NOBODY", timestamp: "2026-01-01T10:00:00Z", payload: {} } }) + "\n");
    const [e, b, o] = await Promise.all([cli(["validate", empty, "--json"]), cli(["validate", blank]), cli(["validate", orphan])]);
    expect(e.code).toBe(1);
    expect(JSON.parse(e.stdout).errors).toEqual([{ line: 0, code: "empty_file", message: "the file holds no patient or log row" }]);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain("line 0: empty_file");
    expect(o.code).toBe(1);
    expect(o.stderr).toMatch(/line 1: unknown_patient: .*offline/);
  });

  it("sends logs from a file and from stdin, failing when a log is rejected", async () => {
    const file = join(dir, "logs.json");
    writeFileSync(file, JSON.stringify([symptom(pid, 1, 8), symptom(pid, 3, 4), { log_type: "medication_list_update", patient_id: pid, timestamp: "2026-07-01T09:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975" }] } }]));
    const sent = await cli(["logs", "send", file]);
    expect(sent).toMatchObject({ code: 0, stdout: "accepted 3, duplicates 0, failed 0\n" });
    const jsonl = [symptom(pid, 4, 2), symptom(pid, 5, 42)].map((l) => JSON.stringify(l)).join("\n");
    const mixed = await cli(["logs", "send", "-", "--json"], { input: jsonl });
    expect(mixed.code).toBe(1);
    expect(JSON.parse(mixed.stdout)).toMatchObject({ accepted: 1, failed: 1, errors: [{ index: 1, code: "validation_error" }] });
  });

  it("logs send: a refused log of JSON Lines is named by its line too, as pss validate names it", async () => {
    const own = (await pss.patients.create()).id;
    // Logins: the query test below counts the project's symptom reports.
    const login = (timestamp: string) => JSON.stringify({ log_type: "user_login", patient_id: own, timestamp, payload: {} });
    const jsonl = ["", login("2026-07-04T08:00:00Z"), login("yesterday")].join("\n");
    const r = await cli(["logs", "send", "-"], { input: jsonl });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^log 1 \(line 3\): validation_error: /m);
  });

  it("logs send: an input without logs says nothing was sent (so a wrong key is not vouched for)", async () => {
    const r = await cli(["logs", "send", "-"], { input: "[]" });
    expect(r).toMatchObject({ code: 0, stdout: "accepted 0, duplicates 0, failed 0\n", stderr: "stdin holds no logs: nothing was sent\n" });
  });

  it("logs send --batch-size: each error's index, message and details name its place in the whole file", async () => {
    const own = (await pss.patients.create()).id;
    const jsonl = [{ log_type: "user_login", patient_id: own, timestamp: "2026-07-06T08:00:00Z", payload: {} }, symptom(own, 7, 42)].map((l) => JSON.stringify(l)).join("\n");
    const r = await cli(["logs", "send", "-", "--batch-size", "1", "--json"], { input: jsonl });
    expect(r.code).toBe(1);
    const [e] = JSON.parse(r.stdout).errors;
    expect(e).toMatchObject({ index: 1, message: expect.stringMatching(/^logs\.1\.payload/) });
    expect(e.details[0]).toMatchObject({ field: expect.stringMatching(/^logs\.1\.payload/), location: ["body", "logs", 1, "payload", "symptoms", 0, "score"] });
  });

  it("reads state: a module as JSON, a view as markdown, and fails with the service's message on an unknown patient", async () => {
    const [meds, md, missing] = await Promise.all([
      cli(["state", "get", pid, "--module", "medications"]),
      cli(["state", "get", pid, "--view", "symptom_snapshot", "--format", "markdown"]),
      cli(["state", "get", "pat_00000000000000000000000000"]),
    ]);
    expect(meds.code).toBe(0);
    expect(JSON.parse(meds.stdout).payload.medications[0]).toMatchObject({ rxnorm_cui: "860975" });
    expect(md.code).toBe(0);
    expect(md.stdout).toContain("pain");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not found \(404 not_found_error\)/);
    // A stable module without data prints null (valid JSON), not "undefined".
    const empty = await cli(["state", "get", pid, "--module", "allergies"]);
    expect(empty).toMatchObject({ code: 0, stdout: "null\n" });
  });

  it("pages state logs and events in table mode: the next page's cursor is printed, and --cursor reads it", async () => {
    const first = await cli(["state", "logs", pid, "--limit", "1"]);
    expect(first.code).toBe(0);
    const more = /more: (pss state logs \S+ --limit 1 --cursor (\S+))/.exec(first.stderr);
    expect(more).not.toBeNull();
    const second = await cli(["state", "logs", pid, "--limit", "1", "--cursor", more![2]!]);
    expect(second.code).toBe(0);
    const idOf = (out: string) => out.split("\n")[2]!.split(/\s+/)[0];
    expect(idOf(second.stdout)).not.toBe(idOf(first.stdout));
    const events = await cli(["state", "events", pid, "--limit", "1"]);
    expect(events.stderr).toMatch(/more: pss state events \S+ --limit 1 --cursor \S+/);
    const all = await cli(["state", "events", pid, "--limit", "500"]);
    expect(all.stderr).not.toContain("more:");
  });

  it("prints a view's recent entries as lines and the memories as a table, and filters logs and events by type, trace and status", async () => {
    const own = (await pss.patients.create({ first_name: "Recall", timezone: "Europe/Paris" })).id;
    const sent = await pss.logs.batch([
      // A mood, not a symptom: other tests count the organization's symptom reports.
      { log_type: "mood_report", patient_id: own, timestamp: "2026-07-01T08:00:00Z", payload: { moods: [{ mood: "anxious", intensity: 6 }] }, trace: { object_type: "conversation", object_id: "c-9" } },
      { log_type: "memory_report", patient_id: own, timestamp: "2026-07-02T08:00:00Z", payload: { content: "Walks the dog daily", type: "interests_concerns" }, trace: "c-9" },
    ]);
    const [recent, memories, logs, events, badStatus] = await Promise.all([
      cli(["state", "recent", own, "--view", "symptom_snapshot"]),
      cli(["state", "memories", own, "--query", "dog"]),
      cli(["state", "logs", own, "--trace-type", "conversation", "--trace-id", "c-9", "--json"]),
      cli(["state", "events", own, "--type", "memory_report", "--status", "complete", "--json"]),
      cli(["state", "events", own, "--status", "done"]),
    ]);
    // 08:00 UTC is 10:00 in Paris in July.
    expect(recent).toMatchObject({ code: 0, stdout: "2026-07-01 10:00 — mood_report: anxious 6/10\n" });
    expect(memories.code).toBe(0);
    expect(memories.stdout).toMatch(new RegExp(`2026-07-02T08:00:00.000Z\\s+interests_concerns\\s+Walks the dog daily\\s+${sent.results[1]!.id}`));
    expect(JSON.parse(logs.stdout).logs.map((l: { id: string }) => l.id)).toEqual([sent.results[0]!.id]);
    expect(JSON.parse(events.stdout).events.map((e: { source_event_log_id: string }) => e.source_event_log_id)).toEqual([sent.results[1]!.id]);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain("--status must be one of complete, applied, no_change, pending, failed");
  });

  it("queries logs with flags, as JSON, a count or a table", async () => {
    const [rows, count, tableOut, grouped, invalid] = await Promise.all([
      cli(["query", "--patient", pid, "--type", "symptom_report", "--where", "payload.symptoms.0.score>3", "--order", "timestamp:desc", "--json"]),
      cli(["query", "--body", JSON.stringify({ filter: [{ field: "type", op: "eq", value: "symptom_report" }] }), "--count"]),
      cli(["query", "--patient", pid, "--select", "score=payload.symptoms.0.score,timestamp", "--type", "symptom_report", "--order", "timestamp", "--total"]),
      cli(["query", "--type", "symptom_report", "--group-by", "type", "--agg", "count:n", "--agg", "max:payload.symptoms.0.score:top", "--json"]),
      cli(["query", "--where", "patient_id=x"]),
    ]);
    const inJson = await cli(["query", "--where", 'type in ["symptom_report","user_login"]', "--dry-run"]);
    // Whole rows in a table: the trace object printed as its text (type:id, or a plain string trace as sent).
    const traces = (await pss.patients.create({ first_name: "Traced" })).id;
    await pss.logs.batch([{ ...symptom(traces, 1, 2), trace: { object_type: "conversation", object_id: "c-1" } }, { ...symptom(traces, 2, 3), trace: "visit-1" }]);
    const traced = (await cli(["query", "--patient", traces, "--order", "timestamp"])).stdout.split("\n");
    expect(traced[0]).toMatch(/^id\s+type\s+timestamp\s+ingested_at\s+trace\s+payload$/);
    expect(traced[2]).toMatch(/symptom_report\s+2026-07-01T08:00:00.000Z\s+\S+Z\s+conversation:c-1\s+\{/);
    expect(traced[3]).toMatch(/2026-07-02T08:00:00.000Z\s+\S+Z\s+visit-1\s+\{/);
    expect(JSON.parse(inJson.stdout).filter).toEqual([{ field: "type", op: "in", value: ["symptom_report", "user_login"] }]);
    expect(rows.code).toBe(0);
    expect(JSON.parse(rows.stdout).rows.map((r: { timestamp: string }) => r.timestamp)).toEqual(["2026-07-03T08:00:00.000Z", "2026-07-01T08:00:00.000Z"]);
    expect(count).toMatchObject({ code: 0, stdout: "3\n" });
    expect(tableOut.stdout.split("\n")[0]).toMatch(/^score\s+timestamp$/);
    expect(tableOut.stdout).toContain("2026-07-04T08:00:00.000Z");
    expect(tableOut.stderr).toContain("3 of 3 rows");
    expect(JSON.parse(grouped.stdout).rows).toEqual([{ type: "symptom_report", n: 3, top: 8 }]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("patient_id");
  });
});

describe("pss fhir send", () => {
  const condition = (id: string, code: string, text: string, subject?: string) => ({
    resourceType: "Condition", id,
    clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code: "active" }] },
    code: { coding: [{ system: "http://snomed.info/sct", code, display: text }] },
    ...(subject ? { subject: { reference: subject } } : {}),
    recordedDate: "2026-02-01",
  });

  it("sends one resource for --patient, then NDJSON as Bundles; a second send stores nothing; refusals go to stderr", async () => {
    writeFileSync(join(dir, "one.json"), JSON.stringify(condition("cli-c1", "195967001", "Asthma")));
    const needsPatient = await cli(["fhir", "send", "one.json"]);
    expect(needsPatient.code).toBe(2);
    expect(needsPatient.stderr).toContain("--patient");
    const one = await cli(["fhir", "send", "one.json", "--patient", pid, "--key", "cli-asthma"]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain("logs accepted 1 (duplicates 0), failed 0");

    const lines = [
      condition("cli-c2", "38341003", "Hypertension", `Patient/${pid}`),
      condition("cli-c3", "13645005", "COPD"),
      { resourceType: "SupplyDelivery", id: "sd", status: "completed" },
    ];
    writeFileSync(join(dir, "export.ndjson"), lines.map((l) => JSON.stringify(l)).join("\n"));
    const first = await cli(["fhir", "send", "export.ndjson", "--patient", pid]);
    expect(first.code).toBe(1);
    expect(first.stdout).toContain("resources stored 2, already stored 0, refused 1");
    expect(first.stderr).toMatch(/resource 2: 422 Unprocessable Entity: Bundle.entry\[2\].resource.resourceType .*SupplyDelivery/);
    const again = await cli(["fhir", "send", "export.ndjson", "--patient", pid, "--json"]);
    expect(JSON.parse(again.stdout)).toEqual({ stored: 0, duplicates: 2, failed: 1 });
    const held = JSON.stringify((await pss.state.stable(pid)).modules);
    for (const name of ["Asthma", "Hypertension", "COPD"]) expect(held).toContain(name);
  });
});
