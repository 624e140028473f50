import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { echoValue } from "../../src/errors.js";
import { jsonLengthUpTo, moreValuesThan, nestedDeeperThan, overflowingNumberPath, readTextShape, textNestsDeeperThan, textOverLimits } from "../../catalog/json-shape.js";

/** An array nested `levels` deep, built without recursion. */
function deepArray(levels: number): unknown[] {
  const root: unknown[] = [];
  let at = root;
  for (let i = 1; i < levels; i++) {
    const next: unknown[] = [];
    at.push(next);
    at = next;
  }
  return root;
}

function depthOf(v: unknown): number {
  if (v === null || typeof v !== "object") return 0;
  return 1 + Math.max(0, ...Object.values(v).map(depthOf));
}

function valuesIn(v: unknown): number {
  if (v === null || typeof v !== "object") return 1;
  return 1 + Object.values(v).reduce<number>((n, c) => n + valuesIn(c), 0);
}

/** JSON values whose strings are full of what a scanner could mistake for structure. */
const tricky = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.stringMatching(/^[\\"{}[\]a\u{1F600}]{0,8}$/u),
    fc.string({ unit: "binary" }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(fc.stringMatching(/^[\\"{}[\]ab]{0,6}$/), tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("bounded measures of JSON", () => {
  it("reads the depth of JSON text as the parsed value has it, whatever its strings hold", () => {
    fc.assert(
      fc.property(tricky, fc.integer({ min: 0, max: 6 }), (v, limit) => {
        const text = JSON.stringify(v);
        expect(textNestsDeeperThan(text, limit)).toBe(depthOf(JSON.parse(text)) > limit);
        expect(textNestsDeeperThan(JSON.stringify(v, null, 2), limit)).toBe(depthOf(v) > limit);
        expect(nestedDeeperThan(v, limit)).toBe(depthOf(v) > limit);
      }),
      { seed: 25, numRuns: 500 },
    );
  });

  it("counts the members of each object of JSON text as the parsed value has them, not the items of arrays", () => {
    const widest = (v: unknown): number => (v === null || typeof v !== "object" ? 0
      : Math.max(Array.isArray(v) ? 0 : Object.keys(v).length, ...Object.values(v).map(widest)));
    fc.assert(
      fc.property(tricky, fc.integer({ min: 1, max: 4 }), (v, members) => {
        const text = JSON.stringify(v);
        const over = textOverLimits(text, { depth: 1_000, members });
        expect(over === "members", text).toBe(widest(JSON.parse(text)) > members);
      }),
      { seed: 25, numRuns: 500 },
    );
    expect(textOverLimits(`[${Array(50_000).fill("1").join(",")}]`, { depth: 10, members: 10 })).toBeUndefined();
  });

  it("sees every number literal JSON.parse would read as infinity, and leaves ordinary numbers and strings alone", () => {
    const literal = fc.record({
      minus: fc.boolean(),
      digits: fc.integer({ min: 1, max: 400 }),
      fraction: fc.option(fc.integer({ min: 1, max: 40 })),
      exponent: fc.option(fc.record({ mark: fc.constantFrom("e", "E"), sign: fc.constantFrom("", "+", "-"), value: fc.integer({ min: 0, max: 1_200 }) })),
    }).map(({ minus, digits, fraction, exponent }) => `${minus ? "-" : ""}${"9".repeat(digits)}${fraction ? `.${"5".repeat(fraction)}` : ""}${exponent ? `${exponent.mark}${exponent.sign}${exponent.value}` : ""}`);
    const limits = { depth: 10, members: 10 };
    fc.assert(
      fc.property(literal, (n) => {
        const text = `{"a":[1,${n}],"b":"${n}"}`;
        const { mayOverflow } = readTextShape(text, limits);
        if (!Number.isFinite(JSON.parse(n))) {
          expect(mayOverflow, n).toBe(true);
          expect(overflowingNumberPath(text, JSON.parse(text))).toEqual(["a", 1]);
        }
        // Well within range, and without a three-digit exponent: never a walk.
        if (Math.abs(JSON.parse(n)) < 1e250 && !/[eE]\+?\d{3}/.test(n)) expect(mayOverflow, n).toBe(false);
      }),
      { seed: 28, numRuns: 2_000 },
    );
    const ordinary = JSON.stringify({ t: 1732770000123, x: -72.5, y: 1e-300, z: 6.02e23, big: Number.MAX_SAFE_INTEGER, s: `1e400 ${"9".repeat(400)}` });
    expect(readTextShape(ordinary, limits).mayOverflow).toBe(false);
    // Near the edge it may say yes; the walk of the parsed value then clears it.
    const edge = JSON.stringify({ x: Number.MAX_VALUE });
    expect(readTextShape(edge, limits).mayOverflow).toBe(true);
    expect(overflowingNumberPath(edge, JSON.parse(edge))).toBeUndefined();
  });

  it("measures JSON length exactly up to the limit, and only says 'more' past it", () => {
    fc.assert(
      fc.property(tricky, fc.integer({ min: 0, max: 200 }), (v, limit) => {
        const length = JSON.stringify(v).length;
        expect(jsonLengthUpTo(v, limit)).toBe(length <= limit ? length : undefined);
      }),
      { seed: 25, numRuns: 500 },
    );
  });

  it("counts values up to the limit", () => {
    fc.assert(
      fc.property(tricky, fc.integer({ min: 0, max: 40 }), (v, limit) => {
        expect(moreValuesThan(v, limit)).toBe(valuesIn(v) > limit);
      }),
      { seed: 25, numRuns: 500 },
    );
  });

  it("measures a value 100,000 levels deep, or of a million items, without recursing and in bounded time", () => {
    const deep = deepArray(100_000);
    const wide = Array.from({ length: 1_000_000 }, () => ({}));
    const started = performance.now();
    expect(nestedDeeperThan(deep, 128)).toBe(true);
    expect(textNestsDeeperThan(`${"[".repeat(100_000)}${"]".repeat(100_000)}`, 128)).toBe(true);
    expect(jsonLengthUpTo(deep, 2048)).toBeUndefined();
    expect(jsonLengthUpTo(wide, 2048)).toBeUndefined();
    expect(moreValuesThan(deep, 2000)).toBe(true);
    expect(moreValuesThan(wide, 2000)).toBe(true);
    expect(echoValue(deep)).toBe("(an array of 1 items, over 2048 bytes as JSON)");
    expect(echoValue(wide)).toBe("(an array of 1000000 items, over 2048 bytes as JSON)");
    expect(performance.now() - started).toBeLessThan(500);
  });

  it("reads a 10,000-log batch's shape whole: within the limits, no number that may overflow (its cost: bench/body-check.ts)", () => {
    const log = (i: number) => ({
      log_type: "symptom_report", patient_id: "pat_01JX0000000000000000000000", timestamp: "2026-01-01T10:00:00Z", idempotency_key: `k-${i}`,
      payload: { symptoms: [{ symptom: "pain", score: 7, notes: 'worse after walking, "sharp" at night \\ [x]' }, { symptom: "fatigue", score: 4 }] },
      metadata: { source: "app", v: 3 },
    });
    const text = JSON.stringify({ logs: Array.from({ length: 10_000 }, (_, i) => log(i)) });
    expect(readTextShape(text, { depth: 128, members: 10_000 })).toEqual({ over: undefined, mayOverflow: false });
    expect(readTextShape(text, { depth: 3, members: 10_000 }).over).toBe("depth");
  });
});
