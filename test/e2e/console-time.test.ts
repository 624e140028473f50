import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshot } from "../support/browser.js";
import { openConsole, startListening } from "../support/console.js";
import { eventually, type TestStack } from "../support/stack.js";

/**
 * The patient page's time (issue 30) in headless Chromium against the real service: the
 * patient as of a day (views, charts and timeline), what changed since a visit, and the
 * logs behind a view entry or a change one click away in the timeline.
 */
let t: TestStack;
let browser: Browser;
let base: string;
let pid: string;
const ids: Record<string, string> = {};
const problems: string[] = [];

const symptoms = (pain: number, nausea: number) => ({ instrument: "esas_r", symptoms: [{ name: "pain", score: pain }, { name: "nausea", score: nausea }] });
const vitals = (sys: number, dia: number, hr: number, at: string) => ({ measurements: { systolic_bp_mmhg: sys, diastolic_bp_mmhg: dia, heart_rate_bpm: hr }, context: { position: "sitting" }, source: "clinic", collection_datetime: at });

beforeAll(async () => {
  ({ t, base } = await startListening({ PSS_VIEW_DEBOUNCE_MS: "10" }));
  const post = (url: string, payload: object) => t.app.inject({ method: "POST", url, headers: t.auth, payload });
  pid = (await post("/v1/patients", { first_name: "Rosa", last_name: "Lind", timezone: "Europe/Paris" })).json().id;
  // A visit on 5 June (Paris): before it, pain 8 and a high blood pressure; after it, pain 3, a better pressure and metformin.
  const logs = {
    painBefore: { log_type: "symptom_report", timestamp: "2026-06-01T08:00:00Z", payload: symptoms(8, 2) },
    bpBefore: { log_type: "vitals_measurement", timestamp: "2026-06-01T09:00:00Z", payload: vitals(150, 95, 88, "2026-06-01T09:00:00Z") },
    metformin: { log_type: "medication_list_update", timestamp: "2026-06-08T09:00:00Z", payload: { medications: [{ action: "add", medication_name: "Metformin", rxnorm_cui: "860975", dose: "500 mg", frequency: "BID" }] } },
    painAfter: { log_type: "symptom_report", timestamp: "2026-06-10T08:00:00Z", payload: symptoms(3, 0) },
    bpAfter: { log_type: "vitals_measurement", timestamp: "2026-06-10T09:00:00Z", payload: vitals(128, 80, 70, "2026-06-10T09:00:00Z") },
  };
  const r = (await post("/v1/logs/batch", { logs: Object.values(logs).map((l) => ({ ...l, patient_id: pid })) })).json();
  expect(r.accepted, JSON.stringify(r.errors)).toBe(5);
  Object.keys(logs).forEach((k, i) => (ids[k] = r.results[i].id));
  await eventually(async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/vitals`, headers: t.auth })).json().payload, (v) => v?.history?.length === 2, 30_000);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function patientPage(): Promise<Page> {
  const page = await openConsole(browser, `${base}/console/`, t.adminKey, problems);
  await page.getByRole("heading", { name: "Patients" }).waitFor();
  await page.goto(`${base}/console/#/patients/${pid}`);
  await page.getByRole("heading", { name: "Rosa Lind" }).waitFor();
  return page;
}

const symptomsNow = (page: Page) => page.getByRole("list", { name: "Symptoms now" }).locator("li").allTextContents();
const timelineIds = (page: Page) => page.locator(".timeline tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-log-id")));

describe("the patient page's time", () => {
  it("shows the patient as of a day in their zone: views, charts and timeline leave out later logs, and come back to now", async () => {
    const page = await patientPage();
    await expect.poll(() => symptomsNow(page), { timeout: 10_000 }).toContainEqual(expect.stringMatching(/^pain: 3\b/));
    const time = page.getByRole("region", { name: "Time" });
    await time.getByLabel("As of day").fill("2026-06-05");
    await time.getByRole("button", { name: "Show as of" }).click();
    expect(await time.getByRole("status").textContent()).toContain("as of 2026-06-05 23:59 (Europe/Paris)");
    await expect.poll(() => symptomsNow(page), { timeout: 10_000 }).toContainEqual(expect.stringMatching(/^pain: 8\b.*1 reports/));
    await expect.poll(() => page.getByRole("definition").filter({ hasText: "mmHg" }).first().textContent()).toMatch(/^150\/95 mmHg/);
    await page.getByRole("tab", { name: "symptom snapshot" }).click();
    await expect.poll(() => page.getByRole("tabpanel").locator("article").textContent(), { timeout: 10_000 }).toMatch(/pain/i);
    const sources = page.getByRole("tabpanel").getByRole("region", { name: "Sources" }).locator(".log-id");
    await expect.poll(() => sources.allTextContents()).toEqual([ids.painBefore, ids.painBefore]);
    await expect.poll(() => timelineIds(page)).toEqual([ids.bpBefore, ids.painBefore]);
    await screenshot(page, "patient-as-of", true);
    await time.getByRole("button", { name: "Back to now" }).click();
    expect(await time.getByRole("status").textContent()).toBe("Showing the patient now.");
    await expect.poll(() => symptomsNow(page)).toContainEqual(expect.stringMatching(/^pain: 3\b.*2 reports/));
    await expect.poll(() => timelineIds(page)).toHaveLength(5);
    await page.close();
  }, 60_000);

  it("lists what changed since a visit, by domain, each change one click from its logs in the timeline", async () => {
    const page = await patientPage();
    const time = page.getByRole("region", { name: "Time" });
    await time.getByLabel("Visit day").fill("2026-06-05");
    await time.getByRole("button", { name: "Show changes since the visit" }).click();
    const changes = page.getByRole("region", { name: /^Changes since 2026-06-05 00:00/ });
    const symptomsDomain = changes.getByRole("region", { name: "Symptoms" });
    await expect.poll(() => symptomsDomain.textContent(), { timeout: 10_000 }).toMatch(/improved.*pain/i);
    expect(await changes.getByRole("region", { name: "Medications" }).textContent()).toMatch(/added.*Metformin/i);
    expect(await changes.locator("p").first().textContent()).toContain("3 logs in the window");
    await changes.getByText(/^Every field that changed/).click();
    expect(await changes.locator("ul.diff").textContent()).toContain("medications (created)");
    await symptomsDomain.getByRole("button", { name: /pain/i }).first().click();
    const timeline = page.getByRole("region", { name: /^Log timeline/ });
    // An improvement names the report it compares with as well as the new one.
    await expect.poll(() => timeline.getByRole("heading").first().textContent()).toBe("Log timeline: only the 2 logs you chose");
    await expect.poll(() => timelineIds(page)).toEqual([ids.painAfter, ids.painBefore]);
    await expect.poll(() => timeline.locator(".changes").first().textContent()).toContain("symptoms");
    // The heading takes the focus, so a keyboard user lands on what the click brought.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("timeline-heading");
    await screenshot(page, "patient-changes", true);
    await timeline.getByRole("button", { name: "Show all logs" }).click();
    await expect.poll(() => timelineIds(page)).toHaveLength(5);
    await page.close();
  }, 60_000);

  it("opens the log behind a view's source entry in the timeline", async () => {
    const page = await patientPage();
    await page.getByRole("tab", { name: "symptom snapshot" }).click();
    const link = page.getByRole("tabpanel").getByRole("button", { name: `Show log ${ids.painAfter} in the timeline` });
    // The pain and nausea entries both come from that report.
    await link.first().click();
    await expect.poll(() => timelineIds(page), { timeout: 10_000 }).toEqual([ids.painAfter]);
    const row = page.locator(`.timeline tr[data-log-id="${ids.painAfter}"]`);
    await row.getByText("payload").click();
    expect(await row.locator("pre").textContent()).toContain('"score": 3');
    // Times read in the patient's zone: 08:00 UTC is 10:00 in Paris in June.
    expect(await row.locator("time").textContent()).toBe("2026-06-10 10:00");
    await page.getByRole("button", { name: "Show all logs" }).click();
    const timeline = page.getByRole("region", { name: /^Log timeline/ });
    await timeline.getByLabel("From day").fill("2026-06-10");
    await timeline.getByLabel("To day").fill("2026-06-10");
    await timeline.getByRole("button", { name: "Filter logs" }).click();
    await expect.poll(() => timelineIds(page)).toEqual([ids.bpAfter, ids.painAfter]);
    await page.close();
  }, 60_000);

  it("ran without a page error or a console error (a CSP violation shows as one)", () => {
    expect(problems).toEqual([]);
  });
});
