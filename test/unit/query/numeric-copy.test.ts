import { describe, expect, it } from "vitest";
import { numericCopy } from "../../../readmodels/query/numeric-copy.js";

describe("numericCopy (what the JSON column is built from)", () => {
  it("keeps numbers, booleans and strings that may read as numbers, at their paths", () => {
    expect(numericCopy({ a: 1, b: true, c: "7", d: "1e3", e: "-inf", f: "nan", g: "2026-05-01T08:00:00Z", nested: { n: 2.5, deeper: { k: 0 } } }))
      .toEqual({ a: 1, b: true, c: "7", d: "1e3", e: "-inf", f: "nan", g: "2026-05-01T08:00:00Z", nested: { n: 2.5, deeper: { k: 0 } } });
  });

  it("drops what numeric reads never use: other strings, nulls, arrays, objects left empty", () => {
    expect(numericCopy({ name: "pain", note: null, list: [1, 2], meta: { source: "app", empty: {} }, score: 4 })).toEqual({ score: 4 });
  });

  it("is an empty object when nothing numeric is left, never undefined", () => {
    expect(numericCopy({})).toEqual({});
    expect(numericCopy({ action: "viewed", content: { type: "article" } })).toEqual({});
  });
});
