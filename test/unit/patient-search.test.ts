import { describe, expect, it } from "vitest";
import { foldName } from "../../src/state/patient-search.js";

describe("foldName", () => {
  it("drops case, accents and apostrophes, and turns other punctuation into single spaces", () => {
    expect(foldName("José O'Brien-Núñez")).toBe("jose obrien nunez");
    expect(foldName("  ANA   María\tGARCÍA ")).toBe("ana maria garcia");
    expect(foldName("D’Angelo")).toBe("dangelo");
  });

  it("folds letters that have no accent to strip", () => {
    expect(foldName("Łukasz Søren Strauß Æsa")).toBe("lukasz soren strauss aesa");
  });

  it("folds compatibility forms, and leaves nothing of a name without letters or digits", () => {
    expect(foldName("ＡＮＡ")).toBe("ana");
    expect(foldName("-- '' --")).toBe("");
  });
});
