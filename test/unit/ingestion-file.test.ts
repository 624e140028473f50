import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateJsonlFile } from "../../src/ingestion/validate-file.js";
import { lineBatches, MAX_LINE_BYTES } from "../../src/ingestion/lines.js";
import { derivedPatientId } from "../../src/ingestion/patient-refs.js";
import { FileChecker } from "../../src/ingestion/file-rules.js";

const dir = mkdtempSync(join(tmpdir(), "pss-jsonl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function fileOf(rows: unknown[], sep = "\n"): string {
  const path = join(dir, `f${++n}.jsonl`);
  writeFileSync(path, rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join(sep) + sep);
  return path;
}

const patient = (value: string, extra: Record<string, unknown> = {}) => ({ type: "patient", data: { first_name: "Ada", external_identifiers: [{ system: "mrn", value }], ...extra } });
const log = (ref: string, score = 3, extra: Record<string, unknown> = {}) => ({
  type: "log",
  data: { event_type: "symptom_report", patient_id: ref, timestamp: "2026-03-01T10:00:00Z", payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] }, ...extra },
});

describe("FileChecker: which line errors fail a file", () => {
  const checker = (held: Record<string, string> = {}) => new FileChecker({ resolve: (ref) => held[ref] ?? (ref.startsWith("pat_") ? ref : null) });

  it("skips a log whose only fault is its payload, and fails one without a patient or a time", async () => {
    const c = checker();
    expect(await c.check(JSON.stringify(patient("A1")), 1)).toMatchObject({ kind: "patient" });
    expect(await c.check(JSON.stringify(log("A1", 42)), 2)).toMatchObject({ kind: "error", code: "validation_error", structural: false });
    const { timestamp: _, ...noTime } = log("A1").data;
    expect(await c.check(JSON.stringify({ type: "log", data: noTime }), 3)).toMatchObject({ kind: "error", code: "invalid_row", structural: true, message: expect.stringMatching(/^timestamp is required/) });
    const { patient_id: __, ...noPatient } = log("A1").data;
    expect(await c.check(JSON.stringify({ type: "log", data: noPatient }), 4)).toMatchObject({ kind: "error", code: "unknown_patient", structural: true });
    expect(await c.check(JSON.stringify({ type: "log", data: {} }), 5)).toMatchObject({ kind: "error", structural: true, message: expect.stringMatching(/^event_type \(or log_type\) is required/) });
  });

  it("takes a log row without payload as one with an empty payload, as the hosted product's SDK leaves an empty payload out", async () => {
    const c = checker();
    await c.check(JSON.stringify(patient("P1")), 1);
    const login = { type: "log", data: { event_type: "user_login", patient_id: "P1", timestamp: "2026-03-01T10:00:00Z" } };
    expect(await c.check(JSON.stringify(login), 2)).toMatchObject({ kind: "log", log_type: "user_login" });
    const { payload: _, ...bare } = log("P1").data;
    expect(await c.check(JSON.stringify({ type: "log", data: bare }), 3)).toMatchObject({ kind: "error", code: "validation_error", structural: false });
  });

  it("fails a patient row whose identifiers belong to two different existing patients (it would reuse either)", async () => {
    const held = { "mrn|M1": "pat_X", "ehr|E1": "pat_Y", "ehr|E2": "pat_X" };
    const row = (ids: [string, string][]) => JSON.stringify({ type: "patient", data: { first_name: "Y", external_identifiers: ids.map(([system, value]) => ({ system, value })) } });
    expect(await checker(held).check(row([["mrn", "M1"], ["ehr", "E1"]]), 1)).toMatchObject({ kind: "error", code: "ambiguous_patient", structural: true, message: expect.stringContaining("mrn|M1 (pat_X), ehr|E1 (pat_Y)") });
    expect(await checker(held).check(row([["mrn", "M1"], ["ehr", "E2"]]), 1)).toMatchObject({ kind: "patient" });
    expect(await checker(held).check(row([["mrn", "N1"], ["ehr", "N2"]]), 1)).toMatchObject({ kind: "patient" });
  });
});

describe("validateJsonlFile (pss validate)", () => {
  it("accepts a file whose logs name patients declared above them, by value or system|value, or service ids", async () => {
    const r = await validateJsonlFile(fileOf([patient("A1"), log("A1"), log("mrn|A1"), log("pat_01JABCDEFGHJKMNPQRSTVWXYZ0"), "", { type: "log", data: { ...log("A1").data, event_type: undefined, log_type: "mood_report", payload: { moods: [{ mood: "calm", intensity: 2 }] } } }], "\r\n"));
    expect(r).toMatchObject({ valid: true, lines: 6, patients: 1, logs: 4, errors: [], structural_errors: 0 });
    expect(r.logs_by_event_type).toEqual({ symptom_report: 3, mood_report: 1 });
  });

  it("reports every bad line with its number, code and message", async () => {
    const r = await validateJsonlFile(
      fileOf([
        log("A1"), // 1: before its patient
        patient("A1"),
        "{not json", // 3
        { type: "visit", data: {} }, // 4
        patient("B1", { timezone: "Mars/Olympus" }), // 5
        patient("A1"), // 6: identifier declared twice
        log("A1", 42), // 7: payload
        { type: "log", data: { ...log("A1").data, event_type: "teleportation" } }, // 8
        log("someone-else"), // 9
        JSON.stringify(log("A1")).replace('"score":3', '"score":1e400'), // 10: would read as infinity
      ]),
    );
    expect(r.valid).toBe(false);
    expect(r.errors.map((e) => [e.line, e.code])).toEqual([
      [1, "unknown_patient"],
      [3, "invalid_json"],
      [4, "unknown_row_type"],
      [5, "invalid_patient"],
      [6, "duplicate_patient"],
      [7, "validation_error"],
      [8, "unknown_log_type"],
      [9, "unknown_patient"],
      [10, "invalid_json"],
    ]);
    expect(r.errors[8]!.message).toBe("data.payload.symptoms.0.score is a number too large to represent (it would read as infinity): send a finite number");
    expect(r.errors[3]!.message).toMatch(/timezone/);
    expect(r.errors[5]!.message).toMatch(/symptoms\.0\.score/);
    expect(r.structural_errors).toBe(7);
  });

  it("asks for system|value when a bare value names two declared patients", async () => {
    const two = [patient("X"), { type: "patient", data: { external_identifiers: [{ system: "other", value: "X" }] } }];
    const r = await validateJsonlFile(fileOf([...two, log("X"), log("other|X")]));
    expect(r.errors).toEqual([{ line: 3, code: "ambiguous_patient", message: expect.stringMatching(/system\|value/) }]);
  });

  it("keeps at most 1,000 errors and says it truncated", async () => {
    const r = await validateJsonlFile(fileOf(Array.from({ length: 1_200 }, () => "nope")));
    expect(r.errors).toHaveLength(1_000);
    expect(r.truncated).toBe(true);
  });

  it("names every line that fails the file ahead of skippable ones when the errors are capped", async () => {
    const skippable = Array.from({ length: 1_500 }, () => log("A1", 50));
    const long = JSON.stringify({ ...log("A1"), pad: "x".repeat(MAX_LINE_BYTES) });
    const r = await validateJsonlFile(fileOf([patient("A1"), ...skippable, long, log("A1")]));
    expect(r.truncated).toBe(true);
    expect(r.structural_errors).toBe(1);
    expect(r.errors).toHaveLength(1_000);
    expect(r.errors[0]).toMatchObject({ line: 1_502, code: "line_too_long" });
    expect(r.errors.slice(1).every((e) => e.code === "validation_error")).toBe(true);
    expect(r.errors[1]!.line).toBe(2);
  });

  it("keeps line order when every error fits", async () => {
    const r = await validateJsonlFile(fileOf([patient("A1"), log("A1", 50), "nope", log("A1", 50)]));
    expect(r.errors.map((e) => [e.line, e.code])).toEqual([[2, "validation_error"], [3, "invalid_json"], [4, "validation_error"]]);
  });
});

describe("lineBatches", () => {
  async function collect(chunks: string[]) {
    const out: [number, string][] = [];
    for await (const b of lineBatches((async function* () {
      yield* chunks.map((c) => new TextEncoder().encode(c));
    })())) b.lines.forEach((l, i) => out.push([b.first + i, l]));
    return out;
  }

  it("numbers lines across chunk borders, dropping CR and keeping a last line without newline", async () => {
    expect(await collect(["ab", "c\r\nde\n\nf", "g"])).toEqual([[1, "abc"], [2, "de"], [3, ""], [4, "fg"]]);
  });

  it("decodes multi-byte characters split between chunks", async () => {
    const bytes = new TextEncoder().encode("é\n");
    const out: string[] = [];
    for await (const b of lineBatches((async function* () {
      yield bytes.slice(0, 1);
      yield bytes.slice(1);
    })())) out.push(...b.lines);
    expect(out).toEqual(["é"]);
  });

  it("refuses a line longer than the limit", async () => {
    await expect(collect(["x".repeat(MAX_LINE_BYTES + 1)])).rejects.toThrow(/line 1 is longer/);
  });

  it("goes on past lines longer than the limit when asked, naming each, whole in a chunk or across many", async () => {
    const long = "x".repeat(MAX_LINE_BYTES + 1);
    const read = async (chunks: string[]) => {
      const lines: [number, string][] = [];
      const tooLong: number[] = [];
      for await (const b of lineBatches((async function* () {
        yield* chunks.map((c) => new TextEncoder().encode(c));
      })(), true)) {
        b.lines.forEach((l, i) => lines.push([b.first + i, l]));
        tooLong.push(...(b.tooLong ?? []));
      }
      return { lines, tooLong };
    };
    // Line 2 whole in a chunk; line 4 spread over three chunks (never held whole); line 6 unfinished at the end.
    const r = await read([`a\n${long}\nb\n${long.slice(0, 100)}`, long, `${long.slice(0, 10)}\nc\n`, `d\n${long}`]);
    expect(r.tooLong).toEqual([2, 4, 7]);
    expect(r.lines).toEqual([[1, "a"], [2, ""], [3, "b"], [4, ""], [5, "c"], [6, "d"], [7, ""]]);
  });
});

describe("validateJsonlFile past a line too long", () => {
  it("reports every bad line after it too, and counts every line", async () => {
    const r = await validateJsonlFile(fileOf([patient("L1"), JSON.stringify(log("L1")).replace('"pain"', `"${"p".repeat(MAX_LINE_BYTES)}"`), { type: "log", data: { ...log("L1").data, payload: "notobj" } }, patient("L2", { first_name: 5 })]));
    expect(r.errors.map((e) => [e.line, e.code])).toEqual([[2, "line_too_long"], [3, "invalid_row"], [4, "invalid_patient"]]);
    expect(r.lines).toBe(4);
  });
});

describe("derivedPatientId", () => {
  it("is stable per job and line, distinct otherwise, and shaped like a patient id", () => {
    const a = derivedPatientId("job_01JABCDEFGHJKMNPQRSTVWXYZ0", 7);
    expect(a).toBe(derivedPatientId("job_01JABCDEFGHJKMNPQRSTVWXYZ0", 7));
    expect(a).not.toBe(derivedPatientId("job_01JABCDEFGHJKMNPQRSTVWXYZ0", 8));
    expect(a).toMatch(/^pat_01JABCDEFG[0-9A-Z]{16}$/);
  });
});
