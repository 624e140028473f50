import { describe, expect, it } from "vitest";
import { mayReadAsNumber, numericCopy } from "../../../query/numeric-copy.js";

describe("numericCopy (what the JSON column is built from)", () => {
  it("keeps numbers, booleans and strings that may read as numbers, at their paths", () => {
    expect(numericCopy({ a: 1, b: true, c: "7", d: "1e3", e: "-inf", f: "nan", g: "+.5", h: "860975", nested: { n: 2.5, deeper: { k: 0 } } }))
      .toEqual({ a: 1, b: true, c: "7", d: "1e3", e: "-inf", f: "nan", g: "+.5", h: "860975", nested: { n: 2.5, deeper: { k: 0 } } });
  });

  it("drops what numeric reads never use: other strings, nulls, arrays, objects left empty", () => {
    expect(numericCopy({ name: "pain", note: null, list: [1, 2], meta: { source: "app", empty: {} }, score: 4 })).toEqual({ score: 4 });
  });

  it("drops dates, times, codes and ids, which toFloat64OrNull reads as NULL", () => {
    const payload = { at: "2026-05-01T08:00:00Z", day: "2026-05-01", time: "08:00", loinc: "2345-7", content_id: "c-12", spaced: " 5", hex: "0x1A", period: { start: "2026-04-30T22:30:00Z" }, v: 3 };
    expect(numericCopy(payload)).toEqual({ v: 3 });
  });

  it("is an empty object when nothing numeric is left, never undefined", () => {
    expect(numericCopy({})).toEqual({});
    expect(numericCopy({ action: "viewed", content: { type: "article" } })).toEqual({});
  });

  it("mayReadAsNumber: a number's spelling, or inf and nan in any case", () => {
    for (const s of ["0", "-1", "+2.", ".5", "1e5", "1E-3", "Infinity", "-INF", "NaN"]) expect(mayReadAsNumber(s), s).toBe(true);
    for (const s of ["", "+", ".", "1 ", "1,5", "1_000", "12:30", "2026-05-01", "abc"]) expect(mayReadAsNumber(s), s).toBe(false);
  });
});
