import { describe, expect, it } from "vitest";
import { Readable } from "node:stream";
import { hasLoneSurrogate, loneSurrogateMessage, loneSurrogatesIn } from "../../src/unicode-text.js";

const parse = (json: string) => JSON.parse(json) as unknown;

describe("lone surrogates in JSON values", () => {
  it("finds half characters in strings and keys at any depth, and none in whole characters", () => {
    expect(hasLoneSurrogate(parse('{"a":[1,{"b":"x\\ud800"}]}'))).toBe(true);
    expect(hasLoneSurrogate(parse('{"a":{"\\udfff":1}}'))).toBe(true);
    expect(hasLoneSurrogate(parse('"\\ude00\\ud83d"'))).toBe(true);
    expect(hasLoneSurrogate(parse('{"\\ud83d\\ude00":["é","\\ud83c\\udf89",null,true,1.5]}'))).toBe(false);
    expect(hasLoneSurrogate(parse(`${"[".repeat(50_000)}"\\ud800"${"]".repeat(50_000)}`))).toBe(true);
  });

  it("locates each place, keys as keys, and says which half and where", () => {
    const found = loneSurrogatesIn(parse('{"a":["ok","x\\udc00"],"\\ud800k":{"b":"\\ud801"}}'), 10);
    expect(found.map((f) => [f.path, f.inKey])).toEqual([
      [["a", 1], false],
      [["\ud800k"], true],
      [["\ud800k", "b"], false],
    ]);
    expect(loneSurrogateMessage(found[0]!)).toBe("is not valid Unicode text: it holds half of a UTF-16 surrogate pair (\\udc00 at character 1); send the whole character (both halves of the pair, or the character itself in UTF-8), or remove it");
    expect(loneSurrogatesIn(parse('["\\ud800","\\ud800","\\ud800"]'), 2)).toHaveLength(2);
  });

  it("does not walk what is no JSON value, such as a raw body's bytes or stream", () => {
    const started = performance.now();
    expect(hasLoneSurrogate(Buffer.alloc(50_000_000))).toBe(false);
    expect(hasLoneSurrogate({ body: Readable.from(["x"]) })).toBe(false);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
