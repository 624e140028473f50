import { describe, expect, it } from "vitest";
import { shrink } from "../../app/mcp/budget.js";

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
    expect(cuts.map((c) => c.path)).toEqual(["content.blocks[2].entries"]);
  });
});
