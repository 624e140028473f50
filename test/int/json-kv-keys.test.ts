import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonKv } from "../../infra/nats/json-kv.js";
import { startStack, type TestStack } from "../support/stack.js";

let t: TestStack;
beforeAll(async () => {
  t = await startStack();
});
afterAll(async () => {
  await t?.close();
});

describe("JsonKv.keys", () => {
  it("lists each key once and at once while a key is written continuously (a running job saves its progress every second)", async () => {
    const kv = new JsonKv<{ n: number }>(t.services.topology.kv.ingestionJobs);
    await kv.put("keys-test.a", { n: 0 });
    await kv.put("keys-test.b", { n: 0 });
    await kv.put("keys-test.gone", { n: 0 });
    await t.services.topology.kv.ingestionJobs.delete("keys-test.gone");
    let writing = true;
    const writer = (async () => {
      for (let n = 1; writing; n++) await kv.put("keys-test.a", { n });
    })();
    try {
      for (let i = 0; i < 5; i++) {
        const started = Date.now();
        const keys = await kv.keys("keys-test.*");
        expect(Date.now() - started).toBeLessThan(2_000);
        // A deleted key may be listed (get answers null for it); a live one exactly once.
        expect(keys.filter((k) => k !== "keys-test.gone").sort()).toEqual(["keys-test.a", "keys-test.b"]);
        expect(await kv.get("keys-test.gone")).toBeNull();
      }
    } finally {
      writing = false;
      await writer;
    }
  });
});
