import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startStack, type TestStack } from "../support/stack.js";
import { expectStructured } from "../support/structured.js";

/**
 * A module too large for one answer keeps every entity (issue 28, defect 1), and the
 * entities/since arguments narrow it, through the SDK's client over a real socket.
 */
let t: TestStack;
let client: Client;
let pid: string;

const SYMPTOMS = ["pain", "tiredness", "nausea", "depression", "anxiety", "shortness_of_breath", "wellbeing", "appetite"];
const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 1, 8);
const iso = (ms: number) => new Date(ms).toISOString();

/** 25 tests, HbA1c last: a year of monthly panels (each test's history goes before any test would). */
const N_TESTS = 25;
const A1C = N_TESTS - 1;
const TESTS = Array.from({ length: N_TESTS }, (_, i) =>
  i === A1C ? { loinc_code: "4548-4", test_name: "Hemoglobin A1c", unit: "%" } : { loinc_code: `${2000 + i}-${i % 10}`, test_name: `Chemistry test ${i + 1}`, unit: "mg/dL" });

async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
  expect(r.isError, r.content[0]!.text).not.toBe(true);
  expectStructured(name, r);
  const text = r.content[0]!.text;
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(20_000);
  return JSON.parse(text);
}

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = t.app.server.address() as { port: number };
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const logs: unknown[] = [];
  // Eight weeks of twice-daily reports of all eight symptoms; wellbeing severe at the end.
  for (let i = 0; i < 56 * 2; i++) {
    const at = START + i * DAY / 2;
    logs.push({ log_type: "symptom_report", patient_id: pid, timestamp: iso(at), payload: { instrument: "esas_r", symptoms: SYMPTOMS.map((name, k) => ({ name, score: name === "wellbeing" && i > 100 ? 9 : (i + k) % 6 })) } });
  }
  for (let m = 0; m < 12; m++) {
    logs.push({ log_type: "lab_results", patient_id: pid, timestamp: iso(Date.UTC(2025, 10 + m, 15, 7)), payload: { results: TESTS.map((x, i) => ({ ...x, value_numeric: i === A1C ? 6 + m / 10 : 80 + m, reference_range_low: i === A1C ? 4 : 70, reference_range_high: i === A1C ? 5.6 : 110 })) } });
  }
  for (let i = 0; i < logs.length; i += 100) {
    const r = await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: logs.slice(i, i + 100) } });
    expect(r.json().accepted, r.body.slice(0, 600)).toBe(Math.min(100, logs.length - i));
  }
  client = new Client({ name: "pss-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.adminKey}` } } }));
}, 60_000);

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("get_event_state_module over its size budget", () => {
  it("keeps all eight symptoms, each with its newest reports, and says what was shortened", async () => {
    const r = await call("get_event_state_module", { patient_id: pid, module_type: "symptoms" });
    expect(r.truncated).toBe(true);
    expect(r.payload.symptoms.map((s: { name: string }) => s.name).sort()).toEqual([...SYMPTOMS].sort());
    const wellbeing = r.payload.symptoms.find((s: { name: string }) => s.name === "wellbeing");
    expect(wellbeing.current_score).toBe(9);
    expect(wellbeing.history.at(-1).timestamp).toBe(iso(START + 111 * DAY / 2));
    expect(r.left_out).toBeUndefined();
    const cut = r.truncated_lists.find((c: { path: string }) => c.path === "payload.symptoms[*].history");
    // The module keeps each symptom's newest 50 reports.
    expect(cut.total).toBe(8 * 50);
    expect(cut.kept).toBeGreaterThanOrEqual(8);
    expect(r.note).toContain("No entity was left out");
  });

  it("keeps all 25 lab tests, HbA1c with its latest value", async () => {
    const r = await call("get_event_state_module", { patient_id: pid, module_type: "lab_results" });
    expect(r.truncated).toBe(true);
    expect(r.payload.results).toHaveLength(N_TESTS);
    const a1c = r.payload.results.find((x: { loinc_code: string }) => x.loinc_code === "4548-4");
    expect(a1c.latest.value_numeric).toBeCloseTo(7.1);
  });

  it("narrows to named entities (by name, alias form or code) and says which matched nothing", async () => {
    const r = await call("get_event_state_module", { patient_id: pid, module_type: "symptoms", entities: ["Shortness of Breath", "WELLBEING", "itching"] });
    expect(r.payload.symptoms.map((s: { name: string }) => s.name).sort()).toEqual(["shortness_of_breath", "wellbeing"]);
    expect(r.payload.symptoms[0].history).toHaveLength(50);
    expect(r.truncated).toBeUndefined();
    expect(r.entities_not_found).toEqual(["itching"]);
    const labs = await call("get_event_state_module", { patient_id: pid, module_type: "lab_results", entities: ["4548-4"] });
    expect(labs.payload.results.map((x: { test_name: string }) => x.test_name)).toEqual(["Hemoglobin A1c"]);
    expect(labs.payload.results[0].history).toHaveLength(12);
  });

  it("since keeps the entries from then on, every entity with its current status", async () => {
    const since = iso(START + 54 * DAY).slice(0, 10);
    const r = await call("get_event_state_module", { patient_id: pid, module_type: "symptoms", since });
    expect(r.filters).toEqual({ entities: null, since: `${since}T00:00:00.000Z` });
    expect(r.truncated).toBeUndefined();
    expect(r.payload.symptoms).toHaveLength(8);
    for (const s of r.payload.symptoms) {
      expect(s.history).toHaveLength(4);
      expect(s.history.every((h: { timestamp: string }) => h.timestamp >= `${since}T00:00:00`)).toBe(true);
    }
  });
});
