import { describe, expect, it } from "vitest";
import { newId, ulid } from "../../src/ids.js";

describe("ulid", () => {
  it("is 26 Crockford base32 characters, the first ten the milliseconds", () => {
    expect(ulid(0)).toMatch(/^0000000000[0-9A-HJKMNP-TV-Z]{16}$/);
    // 1,700,000,000,000 ms in base 32, most significant digit first.
    expect(ulid(1_700_000_000_000).slice(0, 10)).toBe("01HF7YAT00");
    expect(ulid(2 ** 48 - 1).slice(0, 10)).toBe("7ZZZZZZZZZ");
  });

  it("sorts by creation time, and two ids of one millisecond differ", () => {
    const ids = [5, 1_000, 1_700_000_000_000, 1_700_000_000_001].map((t) => ulid(t));
    expect([...ids].sort()).toEqual(ids);
    expect(ulid(42)).not.toBe(ulid(42));
  });

  it("sorts ids of one millisecond in the order they were made, so a batch's logs keep acceptance order", () => {
    const ids = Array.from({ length: 1_000 }, () => ulid(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    const now = Array.from({ length: 1_000 }, () => newId("log"));
    expect([...now].sort()).toEqual(now);
  });
});

describe("newId", () => {
  it("prefixes the kind of thing it names", () => {
    expect(newId("log")).toMatch(/^log_[0-9A-HJKMNP-TV-Z]{26}$/);
  });
});
