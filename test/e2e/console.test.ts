import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleDir } from "../../app/http/routes/console.js";
import type { Browser, Page } from "playwright-core";
import { startListening } from "../support/console.js";
import { launchChromium, screenshot } from "../support/browser.js";
import type { TestStack } from "../support/stack.js";

/**
 * The web console (issue 30) in headless Chromium against the real service: signing in,
 * finding a patient, a patient's views with their source logs, and what a credential
 * without a screen's scope sees. With PSS_SCREENSHOTS=1, the README's screenshots too.
 */
let t: TestStack;
let browser: Browser;
let base: string;
let pid: string;
let symptomLog: string;
const problems: string[] = [];

async function open(path = "/console/"): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    // A refused credential's 401 and 403 are the browser's own console lines, not the page's faults.
    if (m.type() === "error" && !/status of 40[13]/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${base}${path}`);
  return page;
}

async function signIn(page: Page, credential: string) {
  await page.getByLabel("API key or token").fill(credential);
  await page.getByRole("button", { name: "Sign in" }).click();
}

beforeAll(async () => {
  ({ t, base } = await startListening({ PSS_VIEW_DEBOUNCE_MS: "10" }));
  const post = (url: string, payload: object) => t.app.inject({ method: "POST", url, headers: t.auth, payload });
  pid = (await post("/v1/patients", { first_name: "Marguerite", last_name: "Okonkwo", date_of_birth: "1958-03-14", external_identifiers: [{ system: "urn:mrn", value: "MRN-3301" }] })).json().id;
  await post("/v1/patients", { first_name: "Tomas", last_name: "Lindqvist" });
  const logs = [
    { log_type: "symptom_report", patient_id: pid, timestamp: new Date(Date.now() - 3_600_000).toISOString(), payload: { instrument: "esas_r", symptoms: [{ name: "pain", score: 7 }, { name: "nausea", score: 2 }] } },
    { log_type: "condition", patient_id: pid, timestamp: "2025-01-10T09:00:00Z", payload: { disease_type: "Type 2 diabetes mellitus", clinical_status: "active" } },
  ];
  const stored = (await post("/v1/logs/batch", { logs })).json();
  expect(stored.accepted).toBe(2);
  symptomLog = stored.results[0].id;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** The production bundle's budget (README): scripts and styles, gzipped. */
const BUDGET_GZIP_BYTES = 150 * 1024;

describe("the web console", () => {
  it("stays within its bundle budget", () => {
    const assets = join(consoleDir(), "assets");
    const gz = readdirSync(assets).reduce((n, f) => n + gzipSync(readFileSync(join(assets, f))).length, 0);
    expect(gz).toBeLessThan(BUDGET_GZIP_BYTES);
  });

  it("is served by the service with a strict Content-Security-Policy, and every path under it is the page", async () => {
    const r = await fetch(`${base}/console/patients/anything`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'self'; style-src 'self'/);
    expect(await r.text()).toContain('<div id="app"></div>');
  });

  it("refuses a wrong credential saying why, signs in with an API key, lists and finds patients", async () => {
    const page = await open();
    // Every value the page ever writes to session storage, however briefly it stays there.
    await page.evaluate(() => {
      const w = window as unknown as { stored: string[] };
      w.stored = [];
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with each storage as `this` below
      const set = Storage.prototype.setItem;
      Storage.prototype.setItem = function (k: string, v: string) {
        w.stored.push(v);
        set.call(this, k, v);
      };
    });
    await signIn(page, "not-a-key");
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("did not accept");
    await signIn(page, t.adminKey);
    await page.getByRole("heading", { name: "Patients" }).waitFor();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(2);
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toContain("pss.credential");
    // Only the JWT is kept: the key was never stored, not even before its exchange.
    const stored = await page.evaluate(() => (window as unknown as { stored: string[] }).stored);
    expect(stored.some((v) => v.split(".").length === 3)).toBe(true);
    expect(stored.some((v) => v.includes(t.adminKey) || v.includes("not-a-key"))).toBe(false);
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain(t.adminKey);
    expect(page.url()).not.toContain(t.adminKey);
    await screenshot(page, "patients");

    await page.getByLabel("Name, or identifier as system|value").fill("okonk");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    await page.getByLabel("Name, or identifier as system|value").fill("urn:mrn|MRN-3301");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator("tbody").textContent()).toContain("Marguerite Okonkwo");
    await expect.poll(() => page.locator("tbody tr").count()).toBe(1);
    await page.close();
  });

  it("shows a patient's views rendered from their markdown, with the logs behind each", async () => {
    const page = await open();
    await signIn(page, t.adminKey);
    await page.getByRole("link", { name: "Marguerite Okonkwo" }).click();
    await page.getByRole("heading", { name: "Marguerite Okonkwo" }).waitFor();
    expect(await page.locator(".patient-header").textContent()).toContain("1958-03-14");
    await page.getByRole("tab", { name: "symptom snapshot" }).click();
    const panel = page.getByRole("tabpanel");
    await expect.poll(() => panel.textContent(), { timeout: 10_000 }).toMatch(/pain/i);
    expect(await panel.textContent()).toMatch(/7/);
    await expect.poll(() => panel.getByRole("region", { name: "Sources" }).locator(".log-id").allTextContents(), { timeout: 10_000 }).toContain(symptomLog);
    await page.getByRole("tab", { name: "profile snapshot" }).click();
    await expect.poll(() => page.getByRole("tabpanel").textContent(), { timeout: 10_000 }).toContain("Type 2 diabetes mellitus");
    // The markdown is sanitized: no script survives into the page.
    expect(await page.locator("article.view script").count()).toBe(0);
    await screenshot(page, "patient", true);
    await page.close();
  }, 60_000);

  it("shows the patient's log timeline with each log's payload and the state changes it caused, filtered by type", async () => {
    const page = await open();
    await signIn(page, t.adminKey);
    await page.goto(`${base}/console/#/patients/${pid}`);
    const timeline = page.getByRole("region", { name: "Log timeline" });
    const row = timeline.locator(`tr[data-log-id="${symptomLog}"]`);
    await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("symptom_report");
    await expect.poll(() => row.locator(".changes").textContent(), { timeout: 10_000 }).toContain("symptoms");
    await row.getByText("payload").click();
    expect(await row.locator("pre").textContent()).toContain('"pain"');
    await timeline.getByLabel("Log types (comma-separated)").fill("condition");
    await timeline.getByRole("button", { name: "Filter logs" }).click();
    await expect.poll(() => timeline.locator("tbody tr").count()).toBe(1);
    expect(await timeline.locator("tbody").textContent()).toContain("condition");
    await page.close();
  });

  it("hides the patients screen from a credential without api:manage-patients and says why", async () => {
    const key = (await t.app.inject({ method: "POST", url: "/v1/api-keys", headers: t.auth, payload: { name: "reader", scopes: ["sdk:state-read"] } })).json();
    const page = await open("/console/#/patients");
    await signIn(page, key.key ?? key.secret ?? key.api_key);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("api:manage-patients");
    expect(await page.getByRole("link", { name: "Patients" }).count()).toBe(0);
    expect(await page.locator(".scopes").textContent()).toBe("sdk:state-read");
    await page.close();
  });

  it("ran without a page error or a console error (a CSP violation shows as one)", () => {
    expect(problems).toEqual([]);
  });
});
