import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateJsonlFile } from "../../src/ingestion/validate-file.js";

const dir = mkdtempSync(join(tmpdir(), "pss-validate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(text: string): string {
  const path = join(dir, `f${++n}.jsonl`);
  writeFileSync(path, text);
  return path;
}

const log = (ref: string) => JSON.stringify({ type: "log", data: { event_type: "user_login", patient_id: ref, timestamp: "2026-03-01T10:00:00Z", payload: {} } });

describe("validateJsonlFile: the service's verdicts, offline", () => {
  it.each([
    ["an empty file", ""],
    ["a file of blank lines", "\n  \n\r\n\n"],
  ])("fails %s with empty_file at line 0, as the job's VALIDATING stage does", async (_what, text) => {
    const r = await validateJsonlFile(file(text));
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual([{ line: 0, code: "empty_file", message: "the file holds no patient or log row" }]);
    expect(r.structural_errors).toBe(1);
  });

  it("does not add empty_file to a file whose only rows are broken", async () => {
    const r = await validateJsonlFile(file("{nope\n"));
    expect(r.errors.map((e) => e.code)).toEqual(["invalid_json"]);
  });

  it("reports a log naming an undeclared patient as unknown_patient, saying why offline", async () => {
    const r = await validateJsonlFile(file(`${log("MRN-404")}\n`));
    expect(r.errors).toEqual([{ line: 1, code: "unknown_patient", message: expect.stringContaining("offline") }]);
  });
});
