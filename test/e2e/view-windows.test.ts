import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { DEFAULT_ADHERENCE_WINDOW_MINUTES } from "../../readmodels/modules/medications/index.js";
import { startStack, type TestStack } from "../support/stack.js";

/**
 * A view's "last 7 days" counts back from the time of the read, not from the view's newest
 * data (issue 28, defect 3): labs from 16 and 20 days ago are not "results in the last 7
 * days", and doses due since a patient stopped reporting read as not reported.
 */
let t: TestStack;
let client: Client;
let pid: string;

const DAY = 86_400_000;
const today = () => new Date().toISOString().slice(0, 10);
/** `days` before today's UTC midnight, at hh:mm UTC. */
const daysAgo = (days: number, hh = 8, mm = 0) => {
  const midnight = Date.parse(`${today()}T00:00:00Z`);
  return new Date(midnight - days * DAY + (hh * 60 + mm) * 60_000).toISOString();
};

async function getView(viewType: string, format: "raw" | "markdown" = "raw"): Promise<any> {
  const r = (await client.callTool({ name: "get_view", arguments: { patient_id: pid, view_type: viewType, format } })) as { isError?: boolean; content: { text: string }[] };
  expect(r.isError, r.content[0]!.text).not.toBe(true);
  return format === "raw" ? JSON.parse(r.content[0]!.text) : r.content[0]!.text;
}

beforeAll(async () => {
  t = await startStack({ PSS_VIEW_DEBOUNCE_MS: "10" });
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = t.app.server.address() as { port: number };
  pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: {} })).json().id;
  const lab = (at: string, value: number) => ({ log_type: "lab_results", patient_id: pid, timestamp: at, payload: { results: [{ loinc_code: "2823-3", test_name: "Potassium", value_numeric: value, unit: "mmol/L", reference_range_low: 3.5, reference_range_high: 5.1 }] } });
  const logs: unknown[] = [lab(daysAgo(20), 4.1), lab(daysAgo(16), 5.9)];
  logs.push({ log_type: "medication_list_update", patient_id: pid, timestamp: daysAgo(12), payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"] }] } });
  // Both doses taken every day from 10 to 5 days ago; then nothing.
  for (let d = 10; d >= 5; d--) {
    for (const hh of [8, 20]) {
      logs.push({ log_type: "medication_adherence", patient_id: pid, timestamp: daysAgo(d, hh, 5), payload: { medication_adherence: [{ status: "taken", rxnorm_cui: "860975", scheduled_time: daysAgo(d, hh) }] } });
    }
  }
  const r = (await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json();
  expect(r.accepted, JSON.stringify(r.errors)).toBe(logs.length);
  client = new Client({ name: "pss-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.adminKey}` } } }));
});

afterAll(async () => {
  await client?.close();
  await t?.close();
});

describe("a view's week is the 7 days up to the read", () => {
  it("says its window, and old labs are not in it", async () => {
    const v = await getView("labs_snapshot");
    const first = new Date(Date.parse(`${today()}T00:00:00Z`) - 6 * DAY).toISOString().slice(0, 10);
    expect(v.window).toEqual({ days: 7, first_day: first, last_day: today(), time_zone: "UTC" });
    const ids = v.content.blocks.map((b: { id: string }) => b.id);
    expect(ids).toContain("latest_results");
    expect(ids).not.toContain("week_results");
    // The view's own as-of time is still its newest data.
    expect(v.valid_from).toBe(daysAgo(16));
    const md = await getView("labs_snapshot", "markdown");
    expect(md).toContain(`week: last 7 days, ${first} to ${today()} (UTC)`);
    const rest = await t.app.inject({ method: "GET", url: `/v1/state/${pid}/views/labs_snapshot`, headers: t.auth });
    expect(rest.json().window).toEqual(v.window);
    expect((await t.app.inject({ method: "GET", url: `/v1/state/${pid}/views/labs_snapshot?format=markdown`, headers: t.auth })).body).toContain(`week: last 7 days, ${first} to ${today()} (UTC)`);
  });

  it("counts the doses due since the patient stopped reporting as not reported", async () => {
    const v = await getView("medication_snapshot");
    const week = v.content.blocks.find((b: { id: string }) => b.id === "adherence_week");
    // The week: 6 days ago to today. Taken: both doses of 6 and 5 days ago. Not reported:
    // both of 4 to 1 days ago, and today's whose hour-long window has closed.
    const now = Date.now();
    const todays = [8, 20].filter((hh) => Date.parse(daysAgo(0, hh)) + DEFAULT_ADHERENCE_WINDOW_MINUTES * 60_000 <= now).length;
    const due = 12 + todays;
    expect(week.text).toContain(`**Metformin**: 4 of ${due} scheduled doses taken, 0 skipped, ${due - 4} not reported`);
    const missed = v.content.temp.find((b: { id: string }) => b.id === "missed_doses");
    expect(missed.text).toContain(`${due - 4} scheduled doses not reported, ${daysAgo(4).slice(0, 10)} 08:00`);
  });
});
