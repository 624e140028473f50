import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshot } from "../support/browser.js";
import { openConsole, startListening } from "../support/console.js";
import type { TestStack } from "../support/stack.js";

/**
 * The console's ingestion screen (issue 30) in headless Chromium against the real service:
 * a JSONL file uploaded through the page, the job followed to its review, the review's
 * counts against the file's and its preview of the changes, a patient taken out, then one
 * job confirmed into patient state and others cancelled, keeping or removing the patients.
 */
let t: TestStack;
let browser: Browser;
let base: string;
let dir: string;
const problems: string[] = [];

const inject = (method: "GET" | "POST", url: string, payload?: object) => t.app.inject({ method, url, headers: t.auth, ...(payload ? { payload } : {}) });

let seq = 0;
/** A fresh external identifier value, so tests never meet each other's patients. */
const mrn = () => `MRN-${process.pid}-${Date.now()}-${++seq}`;
const patientRow = (value: string, first_name: string) => ({ type: "patient", data: { first_name, timezone: "UTC", external_identifiers: [{ system: "mrn", value }] } });
const symptomRow = (ref: string, ts: string, score: number) => ({ type: "log", data: { event_type: "symptom_report", patient_id: ref, timestamp: ts, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] } } });
const vitalsRow = (ref: string, ts: string, weight_kg: number) => ({
  type: "log",
  data: { event_type: "vitals_measurement", patient_id: ref, timestamp: ts, payload: { measurements: { weight_kg, heart_rate_bpm: 64 }, context: {}, source: "clinic", collection_datetime: ts } },
});
const conditionRow = (ref: string, ts: string) => ({ type: "log", data: { event_type: "condition", patient_id: ref, timestamp: ts, payload: { disease_type: "Type 2 diabetes mellitus", clinical_status: "active" } } });

/** Writes rows as a JSONL file and answers its path. */
function jsonl(name: string, rows: object[]): string {
  const path = join(dir, name);
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

async function open(): Promise<Page> {
  const page = await openConsole(browser, `${base}/console/#/ingestion`, t.adminKey, problems);
  await page.getByRole("heading", { name: "Ingestion" }).waitFor();
  return page;
}

/** Uploads a file through the page and waits for the job's review. Answers the job id. */
async function uploadToReview(page: Page, file: string, rollback = false): Promise<string> {
  await page.getByLabel(/^JSONL file/).setInputFiles(file);
  if (rollback) await page.getByLabel(/also remove the patients it created/).check();
  await page.getByRole("button", { name: "Upload and start" }).click();
  await page.getByRole("heading", { name: "Review" }).waitFor({ timeout: 20_000 });
  return /#\/ingestion\/([A-Za-z0-9_-]+)/.exec(page.url())![1]!;
}

/** A table's rows as [first cell, second cell]. */
async function rows(page: Page, table: string): Promise<[string, string][]> {
  const cells = await page.getByRole("table", { name: table }).locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
  return cells.map((c) => [c[0] ?? "", c[1] ?? ""]);
}

async function patientByMrn(value: string): Promise<{ id: string } | undefined> {
  return (await inject("GET", `/v1/patients?system=mrn&value=${encodeURIComponent(value)}`)).json().patients[0];
}

beforeAll(async () => {
  ({ t, base } = await startListening({ PSS_VIEW_DEBOUNCE_MS: "10" }));
  dir = mkdtempSync(join(tmpdir(), "pss-console-jobs-"));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the console's ingestion screen", () => {
  it("uploads a JSONL file, shows the review's counts as the file has them, and confirms the job into patient state", async () => {
    const a = mrn();
    const b = mrn();
    const file = jsonl("history.jsonl", [
      patientRow(a, "Ada"),
      patientRow(b, "Bea"),
      symptomRow(a, "2026-03-01T10:00:00Z", 5),
      symptomRow(a, "2026-03-02T10:00:00Z", 6),
      symptomRow(b, "2026-03-03T10:00:00Z", 2),
      conditionRow(a, "2025-01-10T09:00:00Z"),
      { type: "log", data: { event_type: "no_such_type", patient_id: a, timestamp: "2026-03-01T10:00:00Z", payload: {} } },
    ]);
    const page = await open();
    const id = await uploadToReview(page, file);

    expect(Object.fromEntries(await rows(page, "Logs by log type"))).toEqual({ symptom_report: "3", condition: "1" });
    const pa = (await patientByMrn(a))!.id;
    const pb = (await patientByMrn(b))!.id;
    expect(Object.fromEntries(await rows(page, "Logs by patient"))).toEqual({ [pa]: "3", [pb]: "1" });
    const errors = await rows(page, "Errors by line");
    expect(errors).toEqual([["7", "unknown_log_type"]]);

    // Only one view backfilled: the confirm body names it.
    const views = page.getByRole("group", { name: "Views to backfill after the replay" }).getByRole("checkbox");
    const n = await views.count();
    for (let i = 1; i < n; i++) await views.nth(i).uncheck();
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => page.locator("#job-status").textContent(), { timeout: 30_000 }).toMatch(/^completed/);

    const job = (await inject("GET", `/v1/ingestion/jobs/${id}`)).json();
    expect(job.summary_types).toHaveLength(1);
    expect((await inject("GET", `/v1/state/${pa}/logs`)).json().logs).toHaveLength(3);
    expect((await inject("GET", `/v1/state/${pb}/logs`)).json().logs).toHaveLength(1);

    // The job is in the list, and its link leads back to it.
    await page.getByRole("link", { name: "All jobs" }).click();
    await page.getByRole("link", { name: id }).waitFor();
    await page.close();
  }, 90_000);

  it("previews what confirming changes, takes a patient out of the review, and cancels with rollback", async () => {
    const d = mrn();
    const e = mrn();
    const file = jsonl("preview.jsonl", [patientRow(d, "Dee"), patientRow(e, "Eve"), vitalsRow(d, "2026-03-01T08:00:00Z", 72.25), symptomRow(e, "2026-03-02T10:00:00Z", 3)]);
    const page = await open();
    const id = await uploadToReview(page, file);
    const pd = (await patientByMrn(d))!.id;
    const pe = (await patientByMrn(e))!.id;

    // The preview's table for Dee: module, field, before → after, as a person reads them.
    const changes = page.getByRole("table", { name: "Changes for Dee" });
    await changes.waitFor({ timeout: 20_000 });
    const cells = await changes.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
    const weight = cells.find((c) => (c[3] ?? "").includes("weight kg: 72.25"));
    expect(weight, JSON.stringify(cells)).toBeDefined();
    expect(weight![0]).toMatch(/vitals/);
    expect(weight![2]).toBe("—");
    await page.getByRole("table", { name: "Changes for Eve" }).waitFor();
    await screenshot(page, "ingestion-review", true);

    // Eve taken out: the counts change, on the page and in the job.
    await page.getByRole("button", { name: `Remove ${pe}` }).click();
    await page.getByRole("group", { name: /Remove patient/ }).getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => page.locator("#review-counts").textContent(), { timeout: 20_000 }).toContain("1 logs staged for 1 patients");
    expect(Object.keys(Object.fromEntries(await rows(page, "Logs by patient")))).toEqual([pd]);
    await expect.poll(async () => page.getByRole("table", { name: "Changes for Eve" }).count()).toBe(0);
    expect((await inject("GET", `/v1/ingestion/jobs/${id}`)).json()).toMatchObject({ patients_total: 1, patients_removed: 1, logs_staged: 1 });
    expect(await patientByMrn(e)).toBeUndefined();

    // Cancel with rollback, asked first: Dee, created by the job, is gone.
    await page.getByRole("button", { name: "Cancel and remove created patients (rollback)" }).click();
    await page.getByRole("button", { name: "Cancel and remove" }).click();
    await expect.poll(() => page.locator("#job-status").textContent(), { timeout: 20_000 }).toBe("cancelled");
    expect((await inject("GET", `/v1/ingestion/jobs/${id}`)).json()).toMatchObject({ rollback_on_cancel: true, patients_rolled_back: 1 });
    expect(await patientByMrn(d)).toBeUndefined();
    await page.close();
  }, 90_000);

  it("cancels a job at its review keeping the patients it created, though the job was made to remove them", async () => {
    const c = mrn();
    const file = jsonl("cancelled.jsonl", [patientRow(c, "Cy"), symptomRow(c, "2026-03-01T10:00:00Z", 4)]);
    const page = await open();
    const id = await uploadToReview(page, file, true);
    expect(await patientByMrn(c)).toBeDefined();
    await page.getByRole("button", { name: "Cancel and keep created patients" }).click();
    // Asked first; No goes back without cancelling.
    await page.getByRole("group", { name: /Cancel this job\?/ }).getByRole("button", { name: "No" }).click();
    expect((await inject("GET", `/v1/ingestion/jobs/${id}`)).json().status).toBe("awaiting_confirmation");
    await page.getByRole("button", { name: "Cancel and keep created patients" }).click();
    await page.getByRole("button", { name: "Cancel the job" }).click();
    await expect.poll(() => page.locator("#job-status").textContent(), { timeout: 20_000 }).toBe("cancelled");
    const job = (await inject("GET", `/v1/ingestion/jobs/${id}`)).json();
    expect(job).toMatchObject({ rollback_on_cancel: false, patients_rolled_back: 0 });
    expect(await patientByMrn(c)).toBeDefined();
    await page.close();
  }, 60_000);

  it("hides the ingestion screen from a credential without sdk:historical-ingest, and says why when asked for it", async () => {
    const key = (await inject("POST", "/v1/api-keys", { name: "patients only", scopes: ["api:manage-patients"] })).json();
    const page = await openConsole(browser, `${base}/console/#/ingestion`, key.key ?? key.secret ?? key.api_key, problems);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("sdk:historical-ingest");
    expect(await page.getByRole("link", { name: "Ingestion" }).count()).toBe(0);
    await page.getByRole("link", { name: "Patients" }).click();
    await page.getByRole("heading", { name: "Patients" }).waitFor();
    await page.close();
  });

  it("ran without a page error or a console error (a CSP violation shows as one)", () => {
    expect(problems).toEqual([]);
  });
});
