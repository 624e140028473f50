import { describe, expect, it } from "vitest";
import { bounded } from "../../app/mcp/budget.js";
import { shrink } from "../../app/mcp/shrink.js";
import { markdownView } from "../../app/mcp/tools/view-format.js";

const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe("shrink: an MCP answer cut to its budget", () => {
  it("cuts one oversized text before any list, so the rest of the answer stays whole", () => {
    const history = Array.from({ length: 10 }, (_, i) => ({ timestamp: `2026-03-${String(i + 1).padStart(2, "0")}T08:00:00Z`, score: i }));
    const doc = { symptoms: [{ name: "pain", history }], notes: [{ text: "x".repeat(30_000) }, { text: "short" }] };
    const { value, cuts } = shrink(doc, 20_000);
    expect(size(value)).toBeLessThanOrEqual(20_000);
    expect(value.symptoms[0]!.history).toHaveLength(10);
    expect(value.notes).toHaveLength(2);
    expect(value.notes[0]!.text.endsWith("… [truncated]")).toBe(true);
    expect(cuts).toEqual([]);
  });

  it("shortens the long list inside one block rather than dropping whole blocks", () => {
    const entries = Array.from({ length: 100 }, (_, i) => ({ timestamp: `2026-03-01T08:${String(i % 60).padStart(2, "0")}:00Z`, text: `note ${i} `.repeat(40) }));
    const doc = { content: { blocks: [{ id: "summary", text: "s".repeat(300) }, { id: "week_changes", text: "w".repeat(800) }, { id: "patient_notes", entries }] } };
    const { value, cuts } = shrink(doc, 20_000);
    expect(size(value)).toBeLessThanOrEqual(20_000);
    expect(value.content.blocks.map((b) => b.id)).toEqual(["summary", "week_changes", "patient_notes"]);
    expect(cuts.map((c) => c.path)).toEqual(["content.blocks[*].entries"]);
  });

  const day = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString();
  const symptom = (name: string, n: number) => ({
    name, status: "active", current_score: 5,
    history: Array.from({ length: n }, (_, i) => ({ timestamp: day(i), score: i % 10, instrument: "esas_r", log_id: `log_${name}_${String(i).padStart(20, "0")}` })),
  });

  it("keeps every symptom and shortens each history to the same newest entries", () => {
    const names = ["pain", "fatigue", "nausea", "depression", "anxiety", "shortness_of_breath", "wellbeing", "appetite"];
    const doc = { payload: { symptoms: names.map((n, i) => symptom(n, i === 0 ? 300 : 60)) } };
    const { value, cuts, leftOut } = shrink(doc, 19_000);
    expect(size(value)).toBeLessThanOrEqual(19_000);
    expect(value.payload.symptoms.map((s) => s.name)).toEqual(names);
    expect(leftOut).toEqual([]);
    const kept = value.payload.symptoms.map((s) => s.history.length);
    // One cap for all: each kept its newest N (the short histories fill up to N too).
    expect(new Set(kept).size).toBe(1);
    expect(kept[0]).toBeGreaterThan(1);
    expect(value.payload.symptoms[0]!.history.at(-1)!.timestamp).toBe(day(299));
    expect(cuts).toEqual([{ path: "payload.symptoms[*].history", kept: kept[0]! * 8, total: 300 + 7 * 60 }]);
  });

  it("keeps all 25 lab tests, HbA1c among them, with at least their latest result", () => {
    const tests = Array.from({ length: 25 }, (_, i) => ({
      loinc_code: i === 24 ? "4548-4" : `1000-${i}`, test_name: i === 24 ? "Hemoglobin A1c" : `Test ${i}`, unit: "mg/dL",
      history: Array.from({ length: 12 }, (_, j) => ({ timestamp: day(j * 30), value_numeric: j, unit: "mg/dL", abnormal_flag: "N", log_id: `log_${i}_${j}`.padEnd(30, "0") })),
    }));
    const out = bounded({ patient_id: "pat_1", payload: { tests } }, "Ask for tests by LOINC code with entities.", 20_000) as { payload: { tests: typeof tests }; truncated: true; left_out?: unknown; note: string };
    expect(size(out)).toBeLessThanOrEqual(20_000);
    expect(out.payload.tests).toHaveLength(25);
    expect(out.payload.tests.find((t) => t.loinc_code === "4548-4")!.history.at(-1)!.value_numeric).toBe(11);
    expect(out.left_out).toBeUndefined();
    expect(out.note).toContain("No entity was left out");
  });

  it("empties a history beside its entity's latest before it leaves an entity out", () => {
    const value = (j: number) => ({ timestamp: day(j), reported_at: day(j + 1), value_numeric: j, unit: "mg/dL", abnormal_flag: "N", log_id: `log_${j}`.padEnd(30, "0") });
    const tests = Array.from({ length: 40 }, (_, i) => ({ loinc_code: `1000-${i}`, test_name: `Test ${i}`, latest: value(11), history: Array.from({ length: 12 }, (_, j) => value(j)) }));
    const { value: out, cuts, leftOut } = shrink({ payload: { results: tests } }, 12_000);
    expect(size(out)).toBeLessThanOrEqual(12_000);
    expect(out.payload.results).toHaveLength(40);
    expect(out.payload.results.every((t) => t.history.length === 0 && t.latest.value_numeric === 11)).toBe(true);
    expect(leftOut).toEqual([]);
    expect(cuts).toEqual([{ path: "payload.results[*].history", kept: 0, total: 480 }]);
    // With room for one entry each, each keeps its newest.
    const roomy = shrink({ payload: { results: tests } }, 20_000).value;
    expect(roomy.payload.results.every((t) => t.history.length >= 1 && t.history.at(-1)!.value_numeric === 11)).toBe(true);
  });

  it("keeps a raw view's three blocks, shortening the list inside the largest", () => {
    const results = Array.from({ length: 80 }, (_, i) => ({ test_name: `Test ${i}`, value: i, timestamp: day(i), note: "x".repeat(200) }));
    const doc = { content: { blocks: [{ id: "latest_results", text: "t".repeat(2000), data: results }, { id: "abnormal_results", text: "a".repeat(3000), data: [] }, { id: "critical_values", text: "c".repeat(500), data: [] }] } };
    const { value } = shrink(doc, 19_000);
    expect(value.content.blocks.map((b) => b.id)).toEqual(["latest_results", "abnormal_results", "critical_values"]);
    expect(value.content.blocks[0]!.data.length).toBeGreaterThan(1);
  });

  it("leaves entities out only when each history is down to one entry, and names them", () => {
    const many = Array.from({ length: 200 }, (_, i) => ({ ...symptom(`symptom_${i}`, 3), attributes: { text: "y".repeat(150) } }));
    const out = bounded({ payload: { symptoms: many } }, "Ask for the rest by name with entities.", 20_000) as { payload: { symptoms: { name: string; history: unknown[] }[] }; left_out: { path: string; kept: number; total: number; left_out: string[] }[]; note: string };
    expect(size(out)).toBeLessThanOrEqual(20_000);
    const kept = out.payload.symptoms.length;
    expect(kept).toBeLessThan(200);
    expect(out.payload.symptoms.every((s) => s.history.length === 1)).toBe(true);
    expect(out.left_out).toEqual([{ path: "payload.symptoms", kept, total: 200, left_out: many.slice(kept).map((s) => s.name) }]);
    expect(out.note).toContain(`symptom_${kept}`);
    expect(out.note).toContain("Ask for the rest by name with entities.");
  });
});

describe("markdownView over its size budget", () => {
  const block = (id: string, lines: number, segment: "long_term" | "week" | "temp" = "long_term") => ({
    id, name: id.replace(/_/g, " "), segment, refs: [`log_${id}`], data: null,
    text: Array.from({ length: lines }, (_, i) => `- ${id} line ${i}: ${"v".repeat(60)}`).join("\n"),
  });

  it("keeps every block's heading and first lines, and names the block to read whole", () => {
    const view = {
      view_type: "labs_snapshot" as const, view_id: "labs_snapshot:0", valid_from: "2026-11-01T00:00:00.000Z", valid_to: null, window: { days: 7, first_day: "2026-10-26", last_day: "2026-11-01", time_zone: "UTC" },
      blocks: [block("latest_results", 600), block("abnormal_results", 3), block("week_results", 200, "week")], temp: [block("critical_values", 2, "temp")],
    };
    const md = markdownView(view);
    expect(Buffer.byteLength(md)).toBeLessThanOrEqual(20_000);
    for (const id of ["latest_results", "abnormal_results", "week_results", "critical_values"]) expect(md).toContain(`(block ${id})`);
    expect(md).toContain("- abnormal_results line 2");
    expect(md).toContain("- critical_values line 1");
    expect(md).toMatch(/- _… \d+ more lines: get_view_block latest_results_/);
    expect(md).toMatch(/- _… \d+ more lines: get_view_block week_results_/);
  });
});
