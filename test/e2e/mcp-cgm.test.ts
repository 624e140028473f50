import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { baseUrl, callTool, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * Time in range from the readings' values, not the devices' flags (issue 28, defect 2),
 * over the 14 days the consensus reports, in one call: 13 days of CGM every 15 minutes up
 * to yesterday, every reading flagged "normal" by the device, a 245 and a 58 mg/dL among
 * each eight.
 */
let t: TestStack;
let client: Client;
let pid: string;

const DAY = 86_400_000;
const todayMs = () => Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const logs: unknown[] = [];
  for (let d = 13; d >= 1; d--) {
    for (let slot = 0; slot < 96; slot++) {
      const at = new Date(todayMs() - d * DAY + slot * 15 * 60_000).toISOString();
      const glucose = slot % 8 === 0 ? 245 : slot % 8 === 4 ? 58 : 120;
      logs.push({ log_type: "cgm_reading", patient_id: pid, timestamp: at, payload: { glucose_mg_dl: glucose, glucose_flag: "normal", sensor_timestamp: at } });
    }
  }
  for (let i = 0; i < logs.length; i += 1000) {
    const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: logs.slice(i, i + 1000) } })).json();
    expect(r.accepted, JSON.stringify(r.errors?.slice(0, 2))).toBe(Math.min(1000, logs.length - i));
  }
  client = await connectMcp(baseUrl(t.app), t.adminKey);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("CGM metrics over 14 days, in one call", () => {
  it("get_view device_snapshot answers time in range from the values, with the thresholds, mean, GMI, CV and coverage", async () => {
    const r = await callTool(client, "get_view", { patient_id: pid, view_type: "device_snapshot" });
    expect(r.isError, r.text).toBe(false);
    const block = r.json.content.blocks.find((b: { id: string }) => b.id === "glucose_14_days");
    const first = new Date(todayMs() - 13 * DAY).toISOString().slice(0, 10);
    const lines = block.text.split("\n");
    expect(lines[0]).toBe(`- **${first} to ${new Date().toISOString().slice(0, 10)}** (14 days): 75% in range 70–180 mg/dL, 12.5% below 70 (0% below 54), 12.5% above 180 (0% above 250)`);
    // 13 of the 14 days hold readings (today none yet).
    expect(lines[1]).toMatch(/^- \*\*Mean\*\* 128 mg\/dL, GMI 6\.4%, CV \d+(\.\d)?%; 1248 readings cover 92\.9% of the 14 days$/);
    expect(lines[2]).toContain("from the readings' values, not devices' flags");
    expect(block.data.metrics).toMatchObject({ readings: 1248, time_in_range_percent: 75, below_70_percent: 12.5, above_180_percent: 12.5, mean_mg_dl: 127.9 });
    // The week's block says the same over its 7 days, and the answer stays in budget.
    const week = r.json.content.blocks.find((b: { id: string }) => b.id === "glucose_week");
    expect(week.text).toContain("75% in range");
    expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(20_000);
  });
});
