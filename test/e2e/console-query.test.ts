import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium, screenshot } from "../support/browser.js";
import { openConsole, startListening } from "../support/console.js";
import { run, type Run } from "../support/run.js";
import type { TestStack } from "../support/stack.js";

/**
 * The console's log query screen (issue 30) in headless Chromium against the real service:
 * filters, conditions, grouping with aggregations, the result table, the CSV download and
 * the JSON body it shows, which the REST API answers the same way, and the `pss query`
 * command it shows, run as shown through sh with the real CLI.
 */
let t: TestStack;
let browser: Browser;
let base: string;
/** A folder with a `pss` on it, as `npm install -g` would leave one, and the CLI's config. */
let bin: string;
const problems: string[] = [];

const query = async (body: object) => (await t.app.inject({ method: "POST", url: "/v1/state/logs/query", headers: t.auth, payload: body })).json();

async function open(): Promise<Page> {
  const page = await openConsole(browser, `${base}/console/#/query`, t.adminKey, problems);
  await page.getByRole("heading", { name: "Log query" }).waitFor();
  return page;
}

const resultRows = (page: Page) => page.getByRole("table", { name: "Query result" }).locator("tbody tr");
const shownBody = async (page: Page) => JSON.parse((await page.locator("pre.json").textContent()) ?? "null");

/** `command` as a person pastes it into a shell: the admin key in PSS_API_KEY, no stored login. */
function sh(command: string): Promise<Run> {
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, PSS_API_KEY: t.adminKey, PSS_URL: "", PSS_PROJECT: "", XDG_CONFIG_HOME: join(bin, "config") };
  return run("sh", ["-c", command], { env });
}

/** The CLI's aligned text table (cli/output.ts) as cells: the dashes under each header give its column's span. */
function cliTable(text: string): string[][] {
  const [header = "", dashes = "", ...lines] = text.trimEnd().split("\n");
  const spans = [...dashes.matchAll(/-+/g)].map((m) => [m.index, m.index + m[0].length] as const);
  return [header, ...lines].map((l) => spans.map(([a, b]) => l.slice(a, b).trim()));
}

/** The console's result table as cells, its header row first. */
async function consoleTable(page: Page): Promise<string[][]> {
  const table = page.getByRole("table", { name: "Query result" });
  const header = await table.locator("thead th").allTextContents();
  const rows = await table.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
  return [header, ...rows];
}

beforeAll(async () => {
  ({ t, base } = await startListening());
  const pid = (await t.app.inject({ method: "POST", url: "/v1/patients", headers: t.auth, payload: { first_name: "Ada" } })).json().id;
  const symptom = (ts: string, score: number) => ({ log_type: "symptom_report", patient_id: pid, timestamp: ts, payload: { instrument: "esas_r", symptoms: [{ name: "pain", score }] } });
  const logs = [
    symptom("2026-03-01T10:00:00Z", 7),
    symptom("2026-03-02T10:00:00Z", 2),
    symptom("2026-03-03T10:00:00Z", 6),
    { log_type: "condition", patient_id: pid, timestamp: "2025-01-10T09:00:00Z", payload: { disease_type: "Type 2 diabetes mellitus", clinical_status: "active" } },
  ];
  expect((await t.app.inject({ method: "POST", url: "/v1/logs/batch", headers: t.auth, payload: { logs } })).json().accepted).toBe(4);
  browser = await launchChromium();
  bin = mkdtempSync(join(tmpdir(), "pss-console-cli-"));
  const entry = fileURLToPath(new URL("../../bin/pss.mjs", import.meta.url));
  writeFileSync(join(bin, "pss"), `#!/bin/sh\nexec '${process.execPath}' '${entry}' "$@"\n`);
  chmodSync(join(bin, "pss"), 0o755);
});

afterAll(async () => {
  await browser?.close();
  if (bin) rmSync(bin, { recursive: true, force: true });
  await t?.close();
});

describe("the console's log query screen", () => {
  it("filters by log type and a payload condition, showing the JSON body the API answers the same way", async () => {
    const page = await open();
    await page.getByLabel("Log type").fill("symptom_report");
    await page.getByRole("button", { name: "Run query" }).click();
    await expect.poll(() => resultRows(page).count()).toBe(3);
    const body = await shownBody(page);
    expect(body).toEqual({ filter: [{ field: "type", op: "eq", value: "symptom_report" }], limit: 100 });
    expect((await query(body)).count).toBe(3);

    await page.getByRole("button", { name: "Add condition" }).click();
    await page.getByLabel(/^Field 1/).fill("payload.symptoms.0.score");
    await page.getByLabel(/^Operator 1/).selectOption("gt");
    await page.getByLabel(/^Value 1/).fill("5");
    await page.getByRole("button", { name: "Run query" }).click();
    await expect.poll(() => resultRows(page).count()).toBe(2);
    expect((await shownBody(page)).filter[1]).toEqual({ field: "payload.symptoms.0.score", op: "gt", value: 5 });
    await page.close();
  });

  it("groups with an aggregation, and downloads the result as CSV", async () => {
    const page = await open();
    await page.getByLabel(/^Group by/).fill("type");
    await page.getByRole("button", { name: "Add aggregation" }).click();
    await page.getByLabel(/^As 1/).fill("logs");
    await page.getByRole("button", { name: "Run query" }).click();
    await expect.poll(() => resultRows(page).count()).toBe(2);
    const body = await shownBody(page);
    expect(body).toEqual({ group_by: ["type"], aggregations: [{ op: "count", alias: "logs" }], limit: 100 });
    const rows = (await query(body)).rows as { type: string; logs: number }[];
    const byType = Object.fromEntries(rows.map((r) => [r.type, Number(r.logs)]));
    expect(byType).toEqual({ symptom_report: 3, condition: 1 });

    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: "Download CSV" }).click()]);
    const csv = readFileSync(await download.path(), "utf8").trim().split(/\r\n/);
    expect(csv[0]).toBe("type,logs");
    expect(csv.slice(1).sort()).toEqual(["condition,1", "symptom_report,3"]);
    await page.close();
  });

  it("shows the `pss query` command that, run in a shell, prints the rows of its table", async () => {
    const page = await open();
    await page.getByRole("button", { name: "Add condition" }).click();
    await page.getByLabel(/^Field 1/).fill("payload.symptoms.0.score");
    await page.getByLabel(/^Operator 1/).selectOption("gte");
    await page.getByLabel(/^Value 1/).fill("2");
    // A value with a single quote, so the command's quoting is put to work.
    await page.getByRole("button", { name: "Add condition" }).click();
    await page.getByLabel(/^Field 2/).fill("payload.instrument");
    await page.getByLabel(/^Operator 2/).selectOption("neq");
    await page.getByLabel(/^Value 2/).fill("it's not");
    await page.getByLabel(/^Group by/).fill("type, payload.instrument");
    await page.getByRole("button", { name: "Add aggregation" }).click();
    await page.getByLabel(/^As 1/).fill("logs");
    await page.getByRole("button", { name: "Add aggregation" }).click();
    await page.getByLabel(/^Aggregation 2/).selectOption("max");
    await page.getByLabel(/^Of field 2/).fill("payload.symptoms.0.score");
    await page.getByLabel(/^As 2/).fill("worst");
    await page.getByRole("button", { name: "Run query" }).click();
    await expect.poll(() => resultRows(page).count()).toBe(1);
    const shown = await consoleTable(page);
    expect(shown).toEqual([["type", "payload.instrument", "logs", "worst"], ["symptom_report", "esas_r", "3", "7"]]);

    const command = (await page.getByLabel("Equivalent pss command").textContent()) ?? "";
    expect(command).toMatch(/^pss query --url http:\/\/127\.0\.0\.1:\d+ --body '/);
    expect(command).toContain(`"it'\\''s not"`);
    const run = await sh(command);
    expect(run.stderr).toBe("1 rows\n");
    expect(run.code).toBe(0);
    expect(cliTable(run.stdout)).toEqual(shown);
    await screenshot(page, "log-query", true);

    await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
    await page.getByRole("button", { name: "Copy the pss command" }).click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(command);
    expect(await page.getByRole("status").textContent()).toBe("Copied.");
    await page.close();
  });

  it("ran without a page error or a console error (a CSP violation shows as one)", () => {
    expect(problems).toEqual([]);
  });
});
