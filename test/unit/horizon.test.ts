import { describe, expect, it } from "vitest";
import { horizonOf } from "../../src/state/as-of-read.js";
import { AppError } from "../../src/errors.js";

const NOW = "2026-11-27T10:00:00.000Z";

describe("horizonOf", () => {
  it("is undefined without either bound (the plain cached read), and keeps only the bounds given", () => {
    expect(horizonOf(undefined, undefined, ["query"], NOW)).toBeUndefined();
    expect(horizonOf("2026-07-01T00:00:00.000Z", undefined, ["query"], NOW)).toEqual({ as_of: "2026-07-01T00:00:00.000Z" });
    expect(horizonOf(undefined, NOW, ["query"], NOW)).toEqual({ known_at: NOW });
  });

  it("takes an as_of ahead of now (logs may carry future event times), and either order of the two", () => {
    expect(horizonOf("2299-01-01T00:00:00.000Z", "2026-07-01T00:00:00.000Z", ["query"], NOW)).toEqual({ as_of: "2299-01-01T00:00:00.000Z", known_at: "2026-07-01T00:00:00.000Z" });
    expect(horizonOf("2026-07-01T00:00:00.000Z", "2026-08-01T00:00:00.000Z", ["query"], NOW)).toBeDefined();
  });

  it("refuses a known_at after now, naming the parameter where it was sent and saying what to change", () => {
    let err: unknown;
    try {
      horizonOf(undefined, "2026-11-27T10:00:00.001Z", ["arguments"], NOW);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(422);
    expect((err as AppError).message).toContain("leave known_at out");
    expect((err as AppError).details[0]).toMatchObject({ location: ["arguments", "known_at"], input_value: "2026-11-27T10:00:00.001Z" });
  });
});
