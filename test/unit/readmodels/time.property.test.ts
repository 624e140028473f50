import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cmpTime } from "../../../readmodels/lib/time.js";

/** The order cmpTime must give: Date.parse's instant, unparsable after parsable, then text. */
function reference(a: string, b: string): number {
  const x = Date.parse(a);
  const y = Date.parse(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y) ? (a < b ? -1 : a > b ? 1 : 0) : Number.isNaN(x) ? 1 : -1;
  return Math.sign(x - y);
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");
// Near-valid stamps, edges included: day 28-31, hour 23-24, second 59-60, 0-9 fraction digits, other forms.
const stamp = fc
  .record({
    year: fc.integer({ min: 2024, max: 2026 }),
    month: fc.integer({ min: 1, max: 13 }),
    day: fc.integer({ min: 27, max: 31 }),
    hour: fc.constantFrom(0, 12, 23, 24),
    minute: fc.constantFrom(0, 59),
    second: fc.constantFrom(0, 59, 60),
    fraction: fc.option(fc.stringMatching(/^\d{1,9}$/), { nil: undefined }),
    zone: fc.constantFrom("Z", "Z", "Z", "+01:00", ""),
  })
  .map((t) => `${t.year}-${pad(t.month)}-${pad(t.day)}T${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}${t.fraction === undefined ? "" : `.${t.fraction}`}${t.zone}`);
const anyStamp = fc.oneof(stamp, stamp.map((s) => s.replace(/-(2[7-9]|3[01])T/, "-05T")), fc.constantFrom("not a time", "2026-01-01T00:00:00.000Z"));

describe("cmpTime", () => {
  it("orders any two timestamps as their instants (Date.parse), whichever path it takes", () => {
    fc.assert(fc.property(anyStamp, anyStamp, (a, b) => Math.sign(cmpTime(a, b)) === reference(a, b)), { numRuns: 20_000 });
  });

  it("reads a fraction to the millisecond, as Date.parse does", () => {
    expect(cmpTime("2026-01-05T00:00:00Z", "2026-01-05T00:00:00.000Z")).toBe(0);
    expect(cmpTime("2026-01-05T00:00:00.1Z", "2026-01-05T00:00:00.099999Z")).toBe(1);
    expect(cmpTime("2026-01-05T00:00:00.0004Z", "2026-01-05T00:00:00Z")).toBe(0);
  });
});
