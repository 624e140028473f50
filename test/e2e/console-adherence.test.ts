import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../support/browser.js";
import { openConsole, startListening } from "../support/console.js";
import { eventually, type TestStack } from "../support/stack.js";

/**
 * The patient page's dose adherence calendar (issue 30) in headless Chromium against the
 * real service: two scheduled medications over fifteen days, each dose reported taken or
 * skipped, one never reported; the calendar merges the adherence module read as of
 * several past instants (it holds a week) and says each day's doses and the counts.
 */
let t: TestStack;
let browser: Browser;
let base: string;
let pid: string;
const problems: string[] = [];

const METFORMIN = { medication_name: "Metformin", rxnorm_cui: "860975" };
const LISINOPRIL = { medication_name: "Lisinopril", rxnorm_cui: "314076" };
/** June 2026 days of Metformin's 08:00 dose: skipped on the 4th and 10th, never reported on the 7th, taken on the others. */
const SKIPPED = [4, 10];
const UNREPORTED = [7];

const day = (d: number) => `2026-06-${String(d).padStart(2, "0")}`;
const dose = (med: object, d: number, hhmm: string, status: "taken" | "skipped") => ({
  log_type: "medication_adherence",
  patient_id: pid,
  timestamp: `${day(d)}T${hhmm.slice(0, 3)}05:00Z`,
  payload: { medication_adherence: [{ ...med, status, scheduled_time: `${day(d)}T${hhmm}:00Z`, dose_amount: 1, dose_unit: "tablet" }] },
});

beforeAll(async () => {
  ({ t, base } = await startListening({ PSS_VIEW_DEBOUNCE_MS: "10" }));
  const post = (url: string, payload: object) => t.app.inject({ method: "POST", url, headers: t.auth, payload });
  pid = (await post("/v1/patients", { first_name: "Rui", last_name: "Almeida", timezone: "UTC" })).json().id;
  const logs: object[] = [{
    log_type: "medication_list_update",
    patient_id: pid,
    timestamp: "2026-05-31T12:00:00Z",
    payload: {
      medications: [
        { action: "add", ...METFORMIN, dose: "500 mg", frequency: "QD", schedule_times: ["08:00"], start_date: day(1) },
        { action: "add", ...LISINOPRIL, dose: "10 mg", frequency: "QD", schedule_times: ["21:00"], start_date: day(11) },
      ],
    },
  }];
  for (let d = 1; d <= 15; d++) {
    if (!UNREPORTED.includes(d)) logs.push(dose(METFORMIN, d, "08:00", SKIPPED.includes(d) ? "skipped" : "taken"));
    if (d >= 11) logs.push(dose(LISINOPRIL, d, "21:00", "taken"));
  }
  const r = (await post("/v1/logs/batch", { logs })).json();
  expect(r.accepted, JSON.stringify(r.errors?.slice(0, 2))).toBe(logs.length);
  const read = async () => (await t.app.inject({ method: "GET", url: `/v1/state/${pid}/event-modules/adherence`, headers: t.auth })).json().payload;
  const a = await eventually(read, (p) => (p?.schedule ?? []).some((s: { until: string }) => s.until.startsWith("2026-06-15T21:05")), 30_000);
  expect(a.schedule).toHaveLength(2);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the patient page's dose adherence calendar", () => {
  let page: Page;
  const calendar = () => page.getByRole("region", { name: "Dose adherence" });
  /** The text of a day's cell for a medication (column 1 is Lisinopril, 2 Metformin: by name). */
  const cell = (d: number, column: number) => calendar().getByRole("row", { name: new RegExp(day(d)) }).getByRole("cell").nth(column - 1).textContent();

  it("tabulates each day's scheduled doses of each medication over the weeks read", async () => {
    page = await openConsole(browser, `${base}/console/#/patients/${pid}`, t.adminKey, problems);
    await calendar().getByRole("table").waitFor({ timeout: 30_000 });
    const headers = await calendar().getByRole("columnheader").allTextContents();
    expect(headers).toEqual(["Day", "Lisinopril", "Metformin"]);
    const days = await calendar().getByRole("rowheader").allTextContents();
    // From the first scheduled dose (June 1, the first read's week and the two before it) to the last read's day.
    expect(days).toHaveLength(15);
    expect(days[0]).toBe("Mon 2026-06-01");
    expect(days[14]).toBe("Mon 2026-06-15");
    expect(await cell(4, 2)).toBe("✗ 08:00 skipped");
    expect(await cell(7, 2)).toBe("? 08:00 not reported");
    expect(await cell(7, 1)).toBe("–");
    expect(await cell(2, 2)).toBe("✓ 08:00 taken");
    expect(await cell(12, 1)).toBe("✓ 21:00 taken");
    await calendar().scrollIntoViewIfNeeded();
    if (process.env.PSS_SCREENSHOTS === "1") await calendar().screenshot({ path: "docs/console/adherence.png" });
  }, 60_000);

  it("states the counts in text, in all and per medication, and the legend of its symbols", async () => {
    expect(await calendar().locator('[data-key="adherence-counts"]').textContent()).toBe(
      "2026-06-01 to 2026-06-15: 17 taken, 2 skipped, 1 not reported (Lisinopril: 5 taken, 0 skipped, 0 not reported; Metformin: 12 taken, 2 skipped, 1 not reported).",
    );
    const legend = (await calendar().getByRole("list", { name: "Legend" }).locator("li").allTextContents()).map((s) => s.trim());
    expect(legend).toEqual(["✓ taken", "✗ skipped", "? not reported", "– no dose scheduled or tracked"]);
  });

  it("shows the calendar as of the page's time: the doses known by then", async () => {
    const time = page.getByRole("region", { name: "Time" });
    await time.getByLabel("As of day").fill(day(8));
    await time.getByRole("button", { name: "Show as of" }).click();
    await expect.poll(() => calendar().locator('[data-key="adherence-counts"]').textContent(), { timeout: 15_000 }).toMatch(/^2026-06-01 to 2026-06-08: 6 taken, 1 skipped, 1 not reported\b/);
    expect(await calendar().getByRole("rowheader").allTextContents()).toHaveLength(8);
    // Lisinopril's schedule starts on June 11: as of June 8 it has no column.
    expect(await calendar().getByRole("columnheader").allTextContents()).toEqual(["Day", "Metformin"]);
    expect(await cell(7, 1)).toBe("? 08:00 not reported");
    await page.close();
  }, 60_000);

  it("ran without a page error or a console error (a CSP violation shows as one)", () => {
    expect(problems).toEqual([]);
  });
});
