import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { validateFile, validateJsonlFile } from "../../src/ingestion/validate-file.js";

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

describe("validateFile: a FHIR NDJSON file, offline, as a job converts it", () => {
  const condition = (id: string, patient: string) =>
    JSON.stringify({ resourceType: "Condition", id, code: { coding: [{ system: "http://snomed.info/sct", code: "44054006" }], text: "Type 2 diabetes mellitus" }, subject: { reference: patient }, recordedDate: "2024-04-03T10:00:00Z" });

  it("counts the Conditions of a Patient declared anywhere in the file, and names the lines it skips or refuses", async () => {
    const r = await validateFile(file([
      condition("c1", "Patient/p1"),
      JSON.stringify({ resourceType: "Patient", id: "p1", identifier: [{ system: "mrn", value: "1" }] }),
      JSON.stringify({ resourceType: "SupplyDelivery", id: "s1", status: "completed" }),
      condition("c2", "Patient/p9"),
      condition("c3", "Patient/p1"),
    ].join("\n")));
    expect(r).toMatchObject({ valid: false, lines: 5, patients: 1, logs: 4, structural_errors: 1, logs_by_event_type: { condition: 2, demographics: 1 } });
    expect(r.errors.map((e) => [e.line, e.code])).toEqual([[3, "fhir_unmappable"], [4, "unknown_patient"]]);
  });
});
