import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { baseUrl, connectMcp } from "../support/mcp-client.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * provider_alert over more readings and dose reports than the modules keep (the newest 50):
 * a CGM reading every five minutes for a day, ten lows early on, and a skipped dose a day
 * for two months: every low and every skip of the window is in the alert.
 */
let t: TestStack;
let mcp: Client;
let pid: string;

const MIN = 60_000;
const DAY = 86_400_000;
const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
const iso = (ms: number) => new Date(ms).toISOString();
const start = today - 2 * DAY;

const section = (text: string, title: string) => text.split("\n\n").find((s) => s.startsWith(`## ${title}`))!.split("\n").slice(1);

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  mcp = await connectMcp(baseUrl(t.app), t.adminKey);
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const cgm = Array.from({ length: 288 }, (_, i) => ({
    log_type: "cgm_reading", patient_id: pid, timestamp: iso(start + i * 5 * MIN), payload: { glucose_mg_dl: i < 10 ? 45 : 120, sensor_timestamp: iso(start + i * 5 * MIN) },
  }));
  const listed = { log_type: "medication_list_update", patient_id: pid, timestamp: iso(today - 70 * DAY), payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", schedule_times: ["08:00", "20:00"] }] } };
  const doses = Array.from({ length: 120 }, (_, i) => {
    const scheduled = today - 60 * DAY + i * DAY / 2 + 8 * 3_600_000;
    return { log_type: "medication_adherence", patient_id: pid, timestamp: iso(scheduled + 10 * MIN), payload: { medication_adherence: [{ status: i % 2 === 0 ? "skipped" : "taken", rxnorm_cui: "860975", scheduled_time: iso(scheduled) }] } };
  });
  const logs = [listed, ...cgm, ...doses];
  for (let i = 0; i < logs.length; i += 200) {
    const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs: logs.slice(i, i + 200) } })).json();
    expect(r.accepted, JSON.stringify(r.errors).slice(0, 500)).toBe(Math.min(200, logs.length - i));
  }
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

describe("provider_alert: readings and doses past what the modules keep", () => {
  it("lists every low CGM reading and every skipped dose of the window", async () => {
    const p = await mcp.getPrompt({ name: "provider_alert", arguments: { patient_id: pid, since: iso(start - MIN) } });
    const text = (p.messages[0]!.content as { text: string }).text;
    const devices = section(text, "Device readings out of range");
    expect(devices).toHaveLength(10);
    expect(devices.every((l) => l.includes("CGM glucose 45 mg/dL"))).toBe(true);
    const month = await mcp.getPrompt({ name: "provider_alert", arguments: { patient_id: pid, since: iso(today - 60 * DAY) } });
    const missed = section((month.messages[0]!.content as { text: string }).text, "Missed doses").filter((l) => l.includes("dose skipped"));
    expect(missed).toHaveLength(60);
  });
});
