import { execFileSync } from "node:child_process";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emptyForm, queryBody } from "../../../console/src/lib/log-query.js";
import { pssQueryCommand, shellQuote } from "../../../console/src/lib/pss-command.js";

/** The words a POSIX shell makes of `line`, one per line of output (printf repeats its format per argument). */
const shellWords = (line: string): string[] => {
  const out = execFileSync("sh", ["-c", `printf '%s\\0' ${line}`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
};

describe("the console's shell quoting", () => {
  it("leaves plain words as they are and single-quotes the rest", () => {
    expect(shellQuote("pat_01J")).toBe("pat_01J");
    expect(shellQuote("http://127.0.0.1:9000")).toBe("http://127.0.0.1:9000");
    expect(shellQuote("a b")).toBe("'a b'");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("O'Brien")).toBe(`'O'\\''Brien'`);
  });

  it("gives back to sh the very text it quoted, whatever it holds", () => {
    // No NUL: no shell word can hold one.
    const text = fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !s.includes("\0"));
    // One shell for all the samples: a word each, so a quote that leaks shows as a split or merged word.
    const samples = fc.sample(text, { numRuns: 300, seed: 30 });
    expect(shellWords(samples.map(shellQuote).join(" "))).toEqual(samples);
    expect(shellWords(shellQuote(`$(touch x) \`id\` "$HOME" \\ ' '' \n*`))).toEqual([`$(touch x) \`id\` "$HOME" \\ ' '' \n*`]);
  });
});

describe("the console's `pss query` command", () => {
  const body = queryBody({
    ...emptyForm(),
    logType: "symptom_report",
    conditions: [{ field: "payload.note", op: "eq", value: "it's fine" }],
    groupBy: "type",
    aggregations: [{ op: "count", field: "", alias: "n" }],
  });

  it("carries the whole body in --body, which sh hands the CLI as the JSON the console sends", () => {
    const command = pssQueryCommand(body);
    expect(command.startsWith("pss query --body '")).toBe(true);
    const words = shellWords(command);
    expect(words.slice(0, 3)).toEqual(["pss", "query", "--body"]);
    expect(JSON.parse(words[3]!)).toEqual(body);
  });

  it("names the console's address unless it is the CLI's default, and the project picked", () => {
    expect(pssQueryCommand({ limit: 5 }, { url: "http://127.0.0.1:8080/" })).toBe(`pss query --body '{"limit":5}'`);
    expect(pssQueryCommand({ limit: 5 }, { url: "https://pss.example.org", project: "prj_1" })).toBe(`pss query --url https://pss.example.org --project prj_1 --body '{"limit":5}'`);
    expect(shellWords(pssQueryCommand({}, { project: "ward 'b'" })).slice(2, 4)).toEqual(["--project", "ward 'b'"]);
  });
});
