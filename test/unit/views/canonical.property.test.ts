import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonical } from "../../../readmodels/views/lib.js";

/** The first, plain version of canonical: the reference the faster one must match exactly. */
function reference(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : reference(x))).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    const keys = Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

describe("canonical", () => {
  it("gives the reference text for any JSON-like value, undefined members included", () => {
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined)),
      node: fc.oneof({ depthSize: "small" }, tie("leaf"), fc.array(tie("node"), { maxLength: 5 }), fc.dictionary(fc.string(), tie("node"), { maxKeys: 5 })),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(canonical(v)).toBe(reference(v));
      }),
      { numRuns: 2_000 },
    );
  });

  it("sorts keys at every depth", () => {
    expect(canonical({ b: [{ z: 1, a: 2 }], a: { d: undefined, c: null } })).toBe('{"a":{"c":null},"b":[{"a":2,"z":1}]}');
  });
});
