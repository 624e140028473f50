import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/browser.js";
import { openConsole, startListening } from "../support/console.js";
import { eventually, type TestStack } from "../support/stack.js";

/**
 * The console's accessibility (issue 30: keyboard, labels, contrast), checked by axe-core
 * against WCAG 2.1 A and AA on every screen, with data on it, in headless Chromium against
 * the real service. axe runs through the DevTools protocol, so the console's CSP stays as served.
 */
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

let t: TestStack;
let browser: Browser;
let base: string;
let pid: string;
const problems: string[] = [];

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe's violations on the page as it stands, each as "rule (impact): help, at selectors". */
async function violations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
  const found = (await page.evaluate(async (tags) => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run(document, { runOnly: { type: "tag", values: tags } })).violations;
  }, TAGS)) as Violation[];
  return found.map((v) => `${v.id} (${v.impact}): ${v.help}, at ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")}`);
}

beforeAll(async () => {
  ({ t, base } = await startListening({ PSS_VIEW_DEBOUNCE_MS: "10" }));
  const post = (url: string, payload: object) => t.app.inject({ method: "POST", url, headers: t.auth, payload });
  pid = (await post("/v1/patients", { first_name: "Aiko", last_name: "Tanaka", timezone: "Asia/Tokyo" })).json().id;
  const at = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
  const logs = [
    { log_type: "symptom_report", timestamp: at(3), payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 6 }] } },
    { log_type: "symptom_report", timestamp: at(1), payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 2 }] } },
    { log_type: "vitals_measurement", timestamp: at(2), payload: { measurements: { systolic_bp_mmhg: 132, diastolic_bp_mmhg: 84, heart_rate_bpm: 72, weight_kg: 61 }, context: { position: "sitting" }, source: "clinic", collection_datetime: at(2) } },
    { log_type: "lab_results", timestamp: at(2), payload: { collection_datetime: at(2), results: [{ loinc_code: "4548-4", test_name: "Hemoglobin A1c", value_numeric: 6.1, unit: "%", reference_range_low: 4, reference_range_high: 5.6 }] } },
    { log_type: "medication_list_update", timestamp: at(4), payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID", schedule_times: ["08:00", "20:00"] }] } },
    ...[3, 2, 1].map((d, i) => ({
      log_type: "medication_adherence",
      timestamp: at(d),
      payload: { medication_adherence: [{ medication_name: "Metformin", rxnorm_cui: "860975", status: i === 1 ? "skipped" : "taken", scheduled_time: at(d) }] },
    })),
  ].map((l) => ({ ...l, patient_id: pid }));
  const stored = (await post("/v1/logs/batch", { logs })).json();
  expect(stored.accepted, JSON.stringify(stored.errors)).toBe(logs.length);
  await eventually(async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/symptoms`, headers: t.auth })).json().payload, (p) => p?.symptoms?.[0]?.history?.length === 2, 30_000);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the console's accessibility (axe-core, WCAG 2.1 A and AA)", () => {
  let page: Page;

  it("has no violation on the sign-in screen", async () => {
    const p = await browser.newPage();
    await p.goto(`${base}/console/`);
    await p.getByLabel("API key or token").waitFor();
    expect(await violations(p)).toEqual([]);
    await p.close();
  });

  it("has none on the patients list and a patient's page with its charts, views, time control and timeline", async () => {
    page = await openConsole(browser, `${base}/console/`, t.adminKey, problems);
    await page.getByRole("link", { name: "Aiko Tanaka" }).waitFor();
    expect(await violations(page)).toEqual([]);
    await page.getByRole("link", { name: "Aiko Tanaka" }).click();
    await page.locator('.charts .chart[data-ready="true"]').first().waitFor();
    await page.getByRole("region", { name: "Log timeline" }).locator("tbody tr").first().waitFor();
    await page.getByRole("region", { name: "Dose adherence" }).getByRole("table").waitFor();
    const time = page.getByRole("region", { name: "Time" });
    await time.getByLabel("Visit day").fill(new Date(Date.now() - 5 * 86_400_000).toISOString().slice(0, 10));
    await time.getByRole("button", { name: "Show changes since the visit" }).click();
    await page.getByRole("region", { name: /^Changes since/ }).getByRole("region", { name: "Symptoms" }).waitFor();
    expect(await violations(page)).toEqual([]);
  }, 60_000);

  it("has none on the ingestion, log query and administration screens", async () => {
    for (const [hash, ready] of [
      ["#/ingestion", "Ingestion"],
      ["#/query", "Log query"],
      ["#/projects", "Projects"],
      ["#/api-keys", "API keys"],
      ["#/audit", "Audit"],
      ["#/dead-letters", "Dead letters"],
    ] as const) {
      await page.goto(`${base}/console/${hash}`);
      await page.getByRole("heading", { name: ready, exact: false }).first().waitFor();
      await page.waitForLoadState("networkidle");
      expect(await violations(page), hash).toEqual([]);
    }
    await page.goto(`${base}/console/#/query`);
    await page.getByRole("button", { name: /run/i }).first().click();
    await page.locator("table").first().waitFor();
    expect(await violations(page), "#/query with rows").toEqual([]);
  }, 90_000);

  it("has none on an ingestion job's review: counts, the preview of what confirming changes, and its controls", async () => {
    const at = "2026-03-01T08:00:00Z";
    const records = [
      { type: "patient", data: { first_name: "Kenji", last_name: "Mori", timezone: "UTC", external_identifiers: [{ system: "mrn", value: "MRN-A11Y-1" }] } },
      { type: "log", data: { event_type: "vitals_measurement", patient_id: "MRN-A11Y-1", timestamp: at, payload: { measurements: { weight_kg: 70.5 }, context: {}, source: "clinic", collection_datetime: at } } },
    ];
    const job = (await t.app.inject({ method: "POST", url: "/v1/ingestion/jobs", headers: t.auth, payload: { records } })).json();
    await eventually(async () => (await t.app.inject({ method: "GET", url: `/v1/ingestion/jobs/${job.job_id}`, headers: t.auth })).json(), (j) => j.status === "awaiting_confirmation", 30_000);
    await page.goto(`${base}/console/#/ingestion/${job.job_id}`);
    await page.getByText("weight kg").first().waitFor({ timeout: 30_000 });
    await page.waitForLoadState("networkidle");
    expect(await violations(page)).toEqual([]);
  }, 60_000);

  it("signs in, opens a patient and a view with the keyboard alone", async () => {
    const p = await browser.newPage();
    await p.goto(`${base}/console/`);
    await p.getByLabel("API key or token").waitFor();
    /** Tabs until the focused element's accessible text matches, then presses Enter on it. */
    const reach = async (what: RegExp, key = "Enter") => {
      for (let i = 0; i < 60; i++) {
        await p.keyboard.press("Tab");
        const text = await p.evaluate(() => {
          // Nothing focused (the body, whose text is the whole page's) matches nothing.
          if (document.activeElement === document.body) return "";
          const e = document.activeElement as HTMLElement | null;
          return `${e?.getAttribute("aria-label") ?? ""} ${e?.textContent ?? ""} ${(e as HTMLInputElement | null)?.labels?.[0]?.textContent ?? ""}`;
        });
        if (what.test(text)) return key && p.keyboard.press(key);
      }
      throw new Error(`no focusable element matching ${what} within 60 tabs`);
    };
    await reach(/API key or token/, "");
    await p.keyboard.type(t.adminKey);
    await p.keyboard.press("Enter");
    await p.getByRole("link", { name: "Aiko Tanaka" }).waitFor();
    await reach(/Aiko Tanaka/);
    await p.getByRole("heading", { name: "Aiko Tanaka" }).waitFor();
    await reach(/^\s*symptom snapshot/);
    await expect.poll(() => p.getByRole("tabpanel").locator("article").textContent(), { timeout: 10_000 }).toMatch(/pain/i);
    await p.close();
  }, 60_000);

  it("ran without a page error or a console error", () => {
    expect(problems).toEqual([]);
  });
});
