import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PatientStateClient } from "../../client/index.js";
import { startCliStack, type Cli, type CliStack } from "../support/cli.js";

// pss state's reads at a past time (--as-of, --known-at), what changed (changes, diff) and
// the logs a change names (--log-ids): REST and the client had them, the CLI did not.
let close: CliStack["close"] | undefined;
let pss: PatientStateClient;
let cli: Cli;
let pid: string;
let ids: string[];

const pain = (day: number, score: number) => ({
  log_type: "symptom_report", patient_id: pid, timestamp: `2026-07-0${day}T08:00:00Z`, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] },
});

beforeAll(async () => {
  ({ pss, cli, close } = await startCliStack());
  pid = (await pss.patients.create({ first_name: "Then" })).id;
  ids = (await pss.logs.batch([pain(1, 3), pain(3, 8), { log_type: "user_login", patient_id: pid, timestamp: "2026-07-02T10:00:00Z", payload: {} }])).results.map((r) => r.id!);
});
afterAll(async () => {
  await close?.();
});

const scoreOf = (stdout: string): unknown => JSON.parse(stdout).payload.symptoms[0].current_score;

describe("pss state at a past time and what changed", () => {
  it("reads a module as it stood --as-of a time, and as the service knew it --known-at a time", async () => {
    const [now, then, known, views] = await Promise.all([
      cli(["state", "get", pid, "--module", "symptoms"]),
      cli(["state", "get", pid, "--module", "symptoms", "--as-of", "2026-07-02"]),
      cli(["state", "get", pid, "--module", "symptoms", "--known-at", new Date().toISOString()]),
      cli(["state", "views", pid, "--as-of", "2026-07-02"]),
    ]);
    expect(now.code, now.stderr).toBe(0);
    expect(scoreOf(now.stdout)).toBe(8);
    expect(then.code, then.stderr).toBe(0);
    expect(scoreOf(then.stdout)).toBe(3);
    expect(JSON.parse(then.stdout).as_of).toBe("2026-07-02T00:00:00.000Z");
    expect(known.code, known.stderr).toBe(0);
    expect(scoreOf(known.stdout)).toBe(8);
    expect(views.code, views.stderr).toBe(0);
    expect(JSON.parse(views.stdout).as_of).toBe("2026-07-02T00:00:00.000Z");
  });

  it("prints what changed since a time as a table with the log ids, or the answer with --json", async () => {
    const [text, answer] = await Promise.all([
      cli(["state", "changes", pid, "--since", "2026-07-02", "--until", "2026-07-04"]),
      cli(["state", "changes", pid, "--since", "2026-07-02", "--until", "2026-07-04", "--json"]),
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split("\n")[1]).toMatch(/^domain\s+at\s+kind\s+what\s+log_ids$/);
    expect(text.stdout).toMatch(new RegExp(`symptoms\\s+2026-07-03T08:00:00.000Z\\s+worsened\\s+.*${ids[1]}`));
    expect(answer.code).toBe(0);
    expect(JSON.parse(answer.stdout)).toMatchObject({ patient_id: pid, since: "2026-07-02T00:00:00.000Z", symptoms: [{ kind: "worsened", log_ids: expect.arrayContaining([ids[1]]) }] });
  });

  it("prints the modules and fields that differ between two times", async () => {
    const [text, answer] = await Promise.all([
      cli(["state", "diff", pid, "--from", "2026-07-02", "--to", "2026-07-04"]),
      cli(["state", "diff", pid, "--from", "2026-07-02", "--to", "2026-07-04", "--basis", "event", "--json"]),
    ]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^as_of 2026-07-02T00:00:00.000Z → 2026-07-04T00:00:00.000Z\n/);
    expect(text.stdout).toMatch(/symptoms\s+event\s+updated\s+\S*symptoms/);
    expect(JSON.parse(answer.stdout)).toMatchObject({ basis: "event", from: "2026-07-02T00:00:00.000Z", modules: expect.arrayContaining([expect.objectContaining({ module_type: "symptoms", op: "updated" })]) });
  });

  it("reads the logs and events --log-ids names, comma-separated or repeated, with --since and --until", async () => {
    const [first, second, third] = ids;
    const [comma, repeated, events, windowed] = await Promise.all([
      cli(["state", "logs", pid, "--log-ids", `${first},${third}`, "--json"]),
      cli(["state", "logs", pid, "--log-ids", first!, "--log-ids", second!, "--json"]),
      cli(["state", "events", pid, "--log-ids", second!, "--json"]),
      cli(["state", "logs", pid, "--since", "2026-07-02", "--until", "2026-07-03T00:00:00Z", "--json"]),
    ]);
    expect(comma.code, comma.stderr).toBe(0);
    expect(JSON.parse(comma.stdout).logs.map((l: { id: string }) => l.id).sort()).toEqual([first, third].sort());
    expect(JSON.parse(repeated.stdout).logs.map((l: { id: string }) => l.id).sort()).toEqual([first, second].sort());
    expect(JSON.parse(events.stdout).events.map((e: { source_event_log_id: string }) => e.source_event_log_id)).toEqual([second]);
    expect(JSON.parse(windowed.stdout).logs.map((l: { id: string }) => l.id)).toEqual([third]);
  });

  it("refuses a missing --since or --from, a bad --basis, and a time option on a subcommand that does not read it (exit 2)", async () => {
    const runs = await Promise.all([
      cli(["state", "changes", pid]),
      cli(["state", "diff", pid]),
      cli(["state", "diff", pid, "--from", "2026-07-01", "--basis", "sometimes"]),
      cli(["state", "logs", pid, "--as-of", "2026-07-01"]),
      cli(["state", "get", pid, "--log-ids", ids[0]!]),
    ]);
    const messages = ["changes needs --since", "diff needs --from", "--basis must be event or known", "--as-of applies to state get, state views, state recent", "--log-ids applies to state logs, state events"];
    runs.forEach((r, i) => {
      expect(r.code, messages[i]).toBe(2);
      expect(r.stderr).toContain(messages[i]);
    });
    const help = await cli(["state", "--help"]);
    for (const option of ["--as-of", "--known-at", "--log-ids", "pss state changes", "pss state diff"]) expect(help.stdout).toContain(option);
  });
});
