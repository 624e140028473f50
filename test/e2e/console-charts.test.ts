import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startListening } from "../support/console.js";
import { launchChromium } from "../support/browser.js";
import { eventually, type TestStack } from "../support/stack.js";

/**
 * The patient page's charts (issue 30) in headless Chromium against the real service: two
 * weeks of CGM readings every 15 minutes with a known distribution, drawn as an ambulatory
 * glucose profile with its time in ranges; blood pressure, heart rate and weight; symptom scores; a lab trend.
 * With PSS_SCREENSHOTS=1, the README's screenshot of the charts too.
 */
let t: TestStack;
let browser: Browser;
let base: string;
let pid: string;
const problems: string[] = [];

const DAY = 86_400_000;
const STEP = 15 * 60_000;
const READINGS = 14 * 96;
/** A 6-hour cycle of 24 readings: 1 very low, 2 low, 16 in range, 3 high, 2 very high. */
const glucoseAt = (i: number) => {
  const k = i % 24;
  return k === 0 ? 45 : k <= 2 ? 62 : k <= 18 ? 120 : k <= 21 ? 210 : 290;
};
const values = Array.from({ length: READINGS }, (_, i) => glucoseAt(i));
const pct = (f: (v: number) => boolean) => `${((values.filter(f).length / READINGS) * 100).toFixed(1)} %`;
const VITALS = [
  { sys: 142, dia: 91, hr: 80, kg: 82.0 },
  { sys: 138, dia: 88, hr: 77, kg: 81.6 },
  { sys: 135, dia: 86, hr: 75, kg: 81.1 },
  { sys: 131, dia: 84, hr: 73, kg: 80.9 },
  { sys: 128, dia: 82, hr: 71, kg: 80.4 },
];

/** ESAS-r scores, day by day: [pain, nausea]. */
const SYMPTOMS = [[7, 2], [6, 3], [4, 1], [3, 0]] as const;

/** Hemoglobin A1c (%), every four days, against 4-5.6 %. */
const A1C = [7.9, 7.4, 7.1];

async function open(path: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${base}${path}`);
  return page;
}

beforeAll(async () => {
  ({ t, base } = await startListening({ PSS_VIEW_DEBOUNCE_MS: "10" }));
  const post = (url: string, payload: object) => t.app.inject({ method: "POST", url, headers: t.auth, payload });
  pid = (await post("/v1/patients", { first_name: "Ines", last_name: "Carvalho", timezone: "America/New_York" })).json().id;
  // Readings end 15 minutes before the last 6-hour boundary (UTC), so the first of each cycle is its very low one.
  const start = Math.floor(Date.now() / (6 * 3_600_000)) * 6 * 3_600_000 - 14 * DAY;
  const logs: object[] = values.map((v, i) => {
    const at = new Date(start + i * STEP).toISOString();
    return { log_type: "cgm_reading", patient_id: pid, timestamp: at, payload: { glucose_mg_dl: v, sensor_timestamp: at } };
  });
  VITALS.forEach((v, i) => {
    const at = new Date(start + (9 + i) * DAY + 8 * 3_600_000).toISOString();
    logs.push({ log_type: "vitals_measurement", patient_id: pid, timestamp: at, payload: { measurements: { systolic_bp_mmhg: v.sys, diastolic_bp_mmhg: v.dia, heart_rate_bpm: v.hr, weight_kg: v.kg }, context: { position: "sitting" }, source: "clinic", collection_datetime: at } });
  });
  SYMPTOMS.forEach(([pain, nausea], i) => {
    const at = new Date(start + (10 + i) * DAY + 12 * 3_600_000).toISOString();
    logs.push({ log_type: "symptom_report", patient_id: pid, timestamp: at, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: pain }, { name: "nausea", score: nausea }] } });
  });
  A1C.forEach((v, i) => {
    const at = new Date(start + (2 + 4 * i) * DAY + 7 * 3_600_000).toISOString();
    logs.push({ log_type: "lab_results", patient_id: pid, timestamp: at, payload: { collection_datetime: at, results: [{ loinc_code: "4548-4", test_name: "Hemoglobin A1c", value_numeric: v, unit: "%", reference_range_low: 4, reference_range_high: 5.6 }] } });
  });
  for (let i = 0; i < logs.length; i += 1000) {
    const r = (await post("/v1/logs/batch", { logs: logs.slice(i, i + 1000) })).json();
    expect(r.accepted, JSON.stringify(r.errors?.slice(0, 2))).toBe(Math.min(1000, logs.length - i));
  }
  const read = (m: string) => async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/${m}`, headers: t.auth })).json().payload;
  await eventually(read("glucose"), (g) => (g?.days ?? []).reduce((n: number, d: { readings: number }) => n + d.readings, 0) === READINGS, 30_000);
  await eventually(read("vitals"), (v) => v?.history?.length === VITALS.length, 30_000);
  await eventually(read("lab_results"), (v) => v?.results?.[0]?.history?.length === A1C.length, 30_000);
  await eventually(read("symptoms"), (v) => v?.symptoms?.[0]?.history?.length === SYMPTOMS.length, 30_000);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the patient page's charts", () => {
  let page: Page;
  let firstRenderMs = 0;

  it("draws the glucose profile and the vitals of a patient with two weeks of CGM readings", async () => {
    page = await open("/console/");
    await page.getByLabel("API key or token").fill(t.adminKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Patients" }).waitFor();
    // A full page load straight to the patient (the credential stays in session storage):
    // from navigation start to every chart drawn, by the page's own clock.
    await page.goto(`${base}/console/?load=1#/patients/${pid}`);
    const ready = await page.waitForFunction(
      () => document.querySelectorAll('.charts .chart[data-ready="true"]').length === 5 && performance.now(),
      undefined,
      { polling: "raf", timeout: 30_000 },
    );
    firstRenderMs = (await ready.jsonValue()) as number;
    const api = await page.evaluate(() =>
      performance.getEntriesByType("resource").filter((e) => e.name.includes("/v1/")).map((e) => ({ path: new URL(e.name).pathname, ms: e.duration, kb: (e as PerformanceResourceTiming).encodedBodySize / 1024 })),
    );
    const logs = api.filter((r) => r.path.endsWith("/logs"));
    console.log(
      `patient page, two weeks of CGM (${READINGS} readings): charts drawn ${firstRenderMs.toFixed(0)} ms after navigation start; ` +
        `${api.length} API requests, ${logs.length} of them for the readings (${logs.reduce((n, r) => n + r.kb, 0).toFixed(0)} KB, the slowest ${Math.max(...logs.map((r) => r.ms)).toFixed(0)} ms)`,
    );
    expect(firstRenderMs).toBeGreaterThan(0);
    if (process.env.PSS_SCREENSHOTS === "1") await page.getByRole("region", { name: "Charts" }).screenshot({ path: "docs/console/charts.png" });
    for (const name of ["Glucose profile", "Blood pressure and heart rate", "Weight", "Symptom scores", "Lab trend: Hemoglobin A1c"]) {
      const box = await page.getByRole("region", { name }).locator("canvas").first().boundingBox();
      expect(box?.width, name).toBeGreaterThan(100);
      expect(box?.height, name).toBeGreaterThan(100);
    }
  }, 60_000);

  it("states the time in each consensus range as the seeded readings give it", async () => {
    const items = (await page.getByRole("list", { name: "Time in ranges" }).locator("li").allTextContents()).map((s) => s.trim());
    expect(items).toEqual([
      `Very high (>250 mg/dL): ${pct((v) => v > 250)}`,
      `High (181-250 mg/dL): ${pct((v) => v > 180 && v <= 250)}`,
      `In range (70-180 mg/dL): ${pct((v) => v >= 70 && v <= 180)}`,
      `Low (54-69 mg/dL): ${pct((v) => v >= 54 && v < 70)}`,
      `Very low (<54 mg/dL): ${pct((v) => v < 54)}`,
    ]);
    expect(items[2]).toContain("66.7 %");
    const summary = await page.getByRole("region", { name: "Glucose profile" }).locator(".chart-summary").textContent();
    expect(summary).toContain(`${READINGS} readings over`);
    const mean = values.reduce((a, b) => a + b, 0) / READINGS;
    expect(summary).toContain(`mean ${Math.round(mean * 10) / 10} mg/dL`);
  });

  it("tabulates the profile's percentiles by time of day", async () => {
    const rows = await page.locator("table.agp-table tbody tr").allTextContents();
    expect(rows).toHaveLength(8);
    // Every bin holds each of its 14 days' readings of one cycle position, pooled with its neighbours: values of the cycle only.
    const medians = await page.locator("table.agp-table tbody tr td:nth-child(4)").allTextContents();
    for (const m of medians) expect([45, 62, 120, 210, 290]).toContain(Number(m));
  });

  it("shows the latest blood pressure, heart rate and weight, and the measurements behind the charts", async () => {
    const latest = page.getByRole("definition").filter({ hasText: "mmHg" });
    expect(await latest.first().textContent()).toMatch(/^128\/82 mmHg/);
    expect(await page.locator('[data-key="hr"]').textContent()).toMatch(/^71 bpm/);
    expect(await page.locator('[data-key="weight"]').textContent()).toMatch(/^80.4 kg/);
    const bp = await page.getByRole("region", { name: "Blood pressure and heart rate" }).locator("table.readings tbody tr").first().textContent();
    expect(bp).toContain("128");
    expect(bp).toContain("82");
    expect(bp).toContain("71");
  });

  it("charts each symptom's scores over time and states where each stands", async () => {
    const now = await page.getByRole("list", { name: "Symptoms now" }).locator("li").allTextContents();
    expect(now.find((s) => s.startsWith("pain"))).toMatch(/^pain: 3\b.*4 reports/);
    expect(now.find((s) => s.startsWith("nausea"))).toMatch(/^nausea: 0\b.*resolved/);
    const latest = await page.getByRole("region", { name: "Symptom scores" }).locator("table.readings tbody tr").first().locator("td").allTextContents();
    expect(latest.slice(1).sort()).toEqual(["0", "3"]);
  });

  it("draws a lab test's values against its reference range, and says both", async () => {
    expect(await page.locator(".lab-summary").textContent()).toBe("Hemoglobin A1c: latest 7.1 % (flag H); reference range 4-5.6 %.");
    const rows = await page.getByRole("region", { name: "Lab trend: Hemoglobin A1c" }).locator("table.readings tbody tr").allTextContents();
    expect(rows).toHaveLength(A1C.length);
    expect(rows[0]).toMatch(/7\.15\.64$/);
    await page.close();
  });

  it("ran without a page error or a console error (a CSP violation shows as one)", () => {
    expect(problems).toEqual([]);
  });
});
