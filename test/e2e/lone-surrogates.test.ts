import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * A JSON body may carry `"\ud800"`: an escape of half a character. Every string a client
 * sends must be Unicode text; a whole character sent as an escaped pair (as Python's
 * json.dumps writes every emoji) is fine.
 */
let t: TestStack;
let pid: string;
beforeAll(async () => {
  t = await startStack();
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
});
afterAll(async () => {
  await t?.close();
});

const send = (method: "POST" | "PUT", url: string, json: string) => t.app.inject({ method, url, headers: { ...t.auth, "content-type": "application/json" }, payload: json });

describe("lone UTF-16 surrogates in request bodies", () => {
  it("refuses them in any string or key of any route's body, naming each place", async () => {
    const cases: [string, string, (string | number)[]][] = [
      ["/v1/patients", '{"first_name":"Ann\\ud800"}', ["body", "first_name"]],
      ["/v1/patients", '{"metadata":{"\\udc00":1}}', ["body", "metadata", "\udc00"]],
      ["/v1/projects", '{"name":"x\\udbff"}', ["body", "name"]],
      ["/v1/state/logs/query", '{"patient_ids":["\\ud800"]}', ["body", "patient_ids", 0]],
    ];
    for (const [url, json, location] of cases) {
      const r = await send("POST", url, json);
      expect(r.statusCode, url).toBe(422);
      expect(r.json()).toMatchObject({ error: true, error_type: "validation_error", details: [{ location, message: expect.stringMatching(/^(is|is a key that is) not valid Unicode text: it holds half of a UTF-16 surrogate pair \(\\ud[89a-f][0-9a-f]{2} at character \d\); send the whole character/) }] });
    }
  });

  it("no longer takes two different half characters for the same external identifier", async () => {
    // Identifiers are claimed by a digest of their UTF-8, where every lone half is U+FFFD.
    const a = await send("POST", "/v1/patients", '{"external_identifiers":[{"system":"mrn\\ud800","value":"1"}]}');
    const b = await send("POST", "/v1/patients", '{"external_identifiers":[{"system":"mrn\\udbff","value":"1"}]}');
    expect([a.statusCode, b.statusCode]).toEqual([422, 422]);
  });

  it("refuses a log holding one in a batch as that log's error, and stores the others", async () => {
    const log = (trace: string) => `{"log_type":"user_login","patient_id":"${pid}","timestamp":"2026-02-01T00:00:00Z","payload":{},"trace":"${trace}"}`;
    const r = await send("POST", "/v1/logs/batch", `{"logs":[${log("ok")},${log("bad\\ud800")},${log("\\ud83d\\ude00")}]}`);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({ accepted: 2, failed: 1, errors: [{ index: 1, code: "validation_error", details: [{ location: ["body", "logs", 1, "trace"] }] }] });
  });

  it("takes whole characters sent as escaped pairs", async () => {
    const r = await send("POST", "/v1/patients", '{"first_name":"Ann \\ud83d\\ude00","metadata":{"\\ud83c\\udf89":"\\u00e9"}}');
    expect(r.statusCode).toBe(201);
    expect(r.json()).toMatchObject({ first_name: "Ann 😀", metadata: { "🎉": "é" } });
  });
});
