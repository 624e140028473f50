import { describe, expect, it } from "vitest";
import { calendarDate, measured, signed } from "../../../readmodels/views/lib.js";

describe("view number formats", () => {
  it("keeps 3 significant digits below 1 and the given decimals from 1 up", () => {
    expect([0.0004, 0.0001234, -0.0004, 0.5, 0.12345, 0.99996, 0].map((n) => measured(n, 3))).toEqual(["0.0004", "0.000123", "-0.0004", "0.5", "0.123", "1", "0"]);
    expect([1.23456, 13.2, 97, -1.9000000000000004].map((n) => measured(n))).toEqual(["1.23", "13.2", "97", "-1.9"]);
    expect(measured(1.234e-7)).toBe("0.000000123");
    expect(measured(null)).toBe("?");
  });

  it("signs a difference, a small one included", () => {
    expect([0.0001, -0.00005, 0, 2.8, -1.9].map((n) => signed(n, 3))).toEqual(["+0.0001", "-0.00005", "0", "+2.8", "-1.9"]);
  });
});

describe("calendarDate", () => {
  const tz = "America/New_York";

  it("reads a bare date or a datetime at exactly midnight UTC as the date written", () => {
    for (const d of ["2026-03-01", "2026-03-01T00:00:00Z", "2026-03-01T00:00:00.000Z", "2026-03-01T00:00:00+00:00", "2026-03-01T00:00Z"]) {
      expect(calendarDate(d, tz)).toBe("2026-03-01");
    }
  });

  it("converts any other instant to the patient's zone", () => {
    expect(calendarDate("2026-03-01T00:00:00.001Z", tz)).toBe("2026-02-28");
    expect(calendarDate("2026-03-01T02:00:00Z", tz)).toBe("2026-02-28");
    expect(calendarDate("2026-03-01T00:00:00+01:00", tz)).toBe("2026-02-28");
    expect(calendarDate(null, tz)).toBe("?");
  });
});
