import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { middleOfRows } from "../../infra/clickhouse/encoded-rows.js";
import { insertSettingAside, type RowInserts } from "../../actors/refused-rows.js";
import { errorClass } from "../../src/error-class.js";

const linesOf = (rows: Buffer) => rows.toString("utf8").split("\n").filter((l) => l !== "");

/** Inserts of a batch where ClickHouse cannot read the rows in `bad`, and names the row, as it does. */
function insertsRefusing(bad: Set<string>) {
  const inserted: string[] = [];
  const refused: string[] = [];
  let calls = 0;
  const io: RowInserts = {
    insert: async (rows) => {
      calls++;
      const lines = linesOf(rows);
      const at = lines.findIndex((l) => bad.has(l));
      if (at >= 0) throw new Error(`Code: 25. DB::Exception: Cannot parse escape sequence: (at row ${at + 1})\nRow 1: ${lines[at]}`);
      inserted.push(...lines);
    },
    answers: async () => true,
    running: () => true,
    pause: async () => {
      throw new Error("no pause expected: ClickHouse named the rows");
    },
    refused: (row) => refused.push(...linesOf(row)),
  };
  return { io, inserted, refused, calls: () => calls };
}

describe("insertSettingAside", () => {
  it("inserts every readable row once and sets aside exactly the unreadable ones, for any batch", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 300 }), fc.uniqueArray(fc.nat({ max: 299 }), { maxLength: 6 }), fc.string({ unit: "grapheme", maxLength: 12 }), async (n, badAt, text) => {
        const lines = Array.from({ length: n }, (_, i) => JSON.stringify([i, text]));
        const bad = new Set(badAt.filter((i) => i < n).map((i) => lines[i]!));
        const x = insertsRefusing(bad);
        expect(await insertSettingAside(Buffer.from(lines.map((l) => `${l}\n`).join("")), x.io)).toBe(true);
        expect(x.refused.sort()).toEqual([...bad].sort());
        expect(x.inserted.sort()).toEqual(lines.filter((l) => !bad.has(l)).sort());
        // One insert when all is well; about two per halving per bad row otherwise.
        expect(x.calls()).toBeLessThanOrEqual(1 + bad.size * 2 * Math.ceil(Math.log2(n) + 1));
      }),
      { seed: 25, numRuns: 300 },
    );
  });

  it("sets nothing aside while ClickHouse takes no row, and stops when the projector stops", async () => {
    let paused = 0;
    let running = true;
    const refused: Buffer[] = [];
    const io: RowInserts = {
      insert: async (rows) => {
        if (rows.length > 0) throw new Error("Code: 243. DB::Exception: not enough space. (NOT_ENOUGH_SPACE)");
      },
      answers: async () => true,
      running: () => running,
      pause: async () => {
        if (++paused === 3) running = false;
      },
      refused: (row) => refused.push(row),
    };
    expect(await insertSettingAside(Buffer.from("[1]\n[2]\n[3]\n"), io)).toBe(false);
    expect(refused).toEqual([]);
    expect(paused).toBe(3);
  });
});

describe("middleOfRows", () => {
  it("cuts between whole lines near the middle, and not at all for one line", () => {
    const cut = (s: string) => {
      const b = Buffer.from(s);
      const at = middleOfRows(b);
      return [b.subarray(0, at).toString(), b.subarray(at).toString()];
    };
    expect(cut("a\n")).toEqual(["", "a\n"]);
    expect(cut("a\nb\n")).toEqual(["a\n", "b\n"]);
    expect(cut("a\nb\nc\n")).toEqual(["a\nb\n", "c\n"]);
    expect(cut("aaaaaaaa\nb\n")).toEqual(["aaaaaaaa\n", "b\n"]);
    expect(cut('["é😀"]\n["x"]\n')).toEqual(['["é😀"]\n', '["x"]\n']);
  });
});

describe("errorClass", () => {
  it("keeps ClickHouse's code and error name and drops the rows its message quotes", () => {
    const err = Object.assign(new Error('Code: 25. DB::Exception: Cannot parse (at row 2)\nRow 2: "pat_secret" "(LOOKS_LIKE_A_NAME)" : While executing X. (CANNOT_PARSE_ESCAPE_SEQUENCE) (version 26.7.2.1)'), { name: "ChdbInsertError", clickhouseCode: 25 });
    expect(errorClass(err)).toEqual({ error: "CANNOT_PARSE_ESCAPE_SEQUENCE", code: 25 });
    expect(errorClass(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:8123"), { code: "ECONNREFUSED" }))).toEqual({ error: "Error", code: "ECONNREFUSED" });
    expect(errorClass("text")).toEqual({ error: "Error" });
  });
});
