import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { HeapGrowthCap } from "../../infra/heap-growth-cap.js";

describe("HeapGrowthCap", () => {
  it("sets V8's growing percent when work starts and restores V8's own factor when it ends, once each", () => {
    const flags: string[] = [];
    const cap = new HeapGrowthCap(80, (f) => flags.push(f));
    cap.set(false);
    expect(flags).toEqual([]);
    cap.set(true);
    cap.set(true);
    expect(cap.active).toBe(true);
    cap.set(false);
    cap.set(false);
    expect(cap.active).toBe(false);
    expect(flags).toEqual(["--heap-growing-percent=80", "--heap-growing-percent=0"]);
  });

  it("keeps the process-wide flag set until the last of several caps lets go", () => {
    const flags: string[] = [];
    const a = new HeapGrowthCap(80, (f) => flags.push(f));
    const b = new HeapGrowthCap(80, (f) => flags.push(f));
    a.set(true);
    b.set(true);
    a.set(false);
    expect(flags).toEqual(["--heap-growing-percent=80"]);
    b.set(false);
    expect(flags).toEqual(["--heap-growing-percent=80", "--heap-growing-percent=0"]);
  });

  it("does nothing at 0 percent", () => {
    const flags: string[] = [];
    const cap = new HeapGrowthCap(0, (f) => flags.push(f));
    cap.set(true);
    expect(cap.active).toBe(false);
    expect(flags).toEqual([]);
  });

  it("tells when the operator started Node with the flag", () => {
    expect(HeapGrowthCap.setByOperator(["--max-semi-space-size=64"], "")).toBe(false);
    expect(HeapGrowthCap.setByOperator(["--heap-growing-percent=50"], "")).toBe(true);
    expect(HeapGrowthCap.setByOperator([], "--max-old-space-size=1536 --heap_growing_percent=30")).toBe(true);
  });

  it("names a flag this Node's V8 knows", () => {
    // setFlagsFromString ignores unknown flags silently: a Node without it would cap nothing.
    expect(execFileSync(process.execPath, ["--v8-options"], { encoding: "utf8" })).toContain("--heap-growing-percent");
  });
});
