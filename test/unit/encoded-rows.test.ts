import { describe, expect, it } from "vitest";
import { EncodedRows } from "../../actors/encoded-rows.js";

describe("EncodedRows", () => {
  it("keeps every line, each ending in a newline, across chunk boundaries and multi-byte text", () => {
    const rows = new EncodedRows();
    const lines: string[] = [];
    // About 3 MB: several 1 MB chunks, one line longer than a chunk, and non-ASCII text.
    for (let i = 0; i < 6_000; i++) lines.push(JSON.stringify(["row", i, "é∂🙂".repeat(i % 7), "x".repeat(400)]));
    lines.splice(3_000, 0, JSON.stringify(["long", "y".repeat(1_500_000)]));
    for (const l of lines) rows.push(l);
    const buf = rows.toBuffer();
    expect(rows.rows).toBe(lines.length);
    expect(buf.length).toBe(rows.bytes);
    expect(buf.toString("utf8")).toBe(lines.map((l) => `${l}\n`).join(""));
  });

  it("is empty before the first row", () => {
    const rows = new EncodedRows();
    expect(rows.toBuffer().length).toBe(0);
    expect(rows.bytes).toBe(0);
  });
});
