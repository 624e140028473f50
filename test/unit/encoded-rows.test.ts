import { describe, expect, it } from "vitest";
import { EncodedRows, RowBufferPool } from "../../infra/clickhouse/encoded-rows.js";

const linesOf = (n: number, seed: number) => Array.from({ length: n }, (_, i) => JSON.stringify(["row", seed, i, "é∂🙂".repeat(i % 7), "x".repeat(400)]));

describe("EncodedRows", () => {
  it("keeps every line, each ending in a newline, as the buffer grows, with multi-byte text", () => {
    const rows = new EncodedRows();
    // About 3 MB: the buffer doubles twice, one line is longer than the first buffer.
    const lines = linesOf(6_000, 1);
    lines.splice(3_000, 0, JSON.stringify(["long", "y".repeat(1_500_000)]));
    for (const l of lines) rows.push(l);
    const buf = rows.toBuffer();
    expect(rows.rows).toBe(lines.length);
    expect(buf.length).toBe(rows.bytes);
    expect(buf.toString("utf8")).toBe(lines.map((l) => `${l}\n`).join(""));
  });

  it("measures a line that may not fit: text whose UTF-8 is up to three times its length", () => {
    const rows = new EncodedRows();
    // Fill to just under the first megabyte, then a line of three-byte characters.
    const filler = "a".repeat(1024 * 1024 - 10);
    rows.push(filler);
    rows.push("€".repeat(100));
    expect(rows.toBuffer().toString("utf8")).toBe(`${filler}\n${"€".repeat(100)}\n`);
  });

  it("is empty before the first row", () => {
    const rows = new EncodedRows();
    expect(rows.toBuffer().length).toBe(0);
    expect(rows.bytes).toBe(0);
  });

  it("reuses a released batch's buffer for a later batch, whose bytes then start afresh", () => {
    const pool = new RowBufferPool();
    const first = new EncodedRows(pool);
    for (const l of linesOf(3_000, 1)) first.push(l);
    const firstBytes = first.toBuffer();
    first.release();
    first.release();
    const second = new EncodedRows(pool);
    const lines = linesOf(10, 2);
    for (const l of lines) second.push(l);
    expect(second.toBuffer().buffer).toBe(firstBytes.buffer);
    expect(second.toBuffer().toString("utf8")).toBe(lines.map((l) => `${l}\n`).join(""));
    // Released twice, given once: the next batch gets a new buffer.
    expect(new EncodedRows(pool).toBuffer().buffer).not.toBe(firstBytes.buffer);
  });
});
