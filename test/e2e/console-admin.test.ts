import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { startListening } from "../support/console.js";
import { launchChromium, screenshot } from "../support/browser.js";
import type { TestStack } from "../support/stack.js";

/**
 * The console's administration screens (issue 30) in headless Chromium against the real
 * service: an API key created with chosen scopes, its secret shown once, the screens that
 * key reaches, its revocation; a project created and renamed; and the audit trail of those
 * actions, filtered by route and key. Run `npm run build` first (it builds the console).
 */
let t: TestStack;
let browser: Browser;
let base: string;
const problems: string[] = [];

async function open(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !/status of 40[13]/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${base}/console/`);
  return page;
}

async function signIn(page: Page, credential: string) {
  await page.getByLabel("API key or token").fill(credential);
  await page.getByRole("button", { name: "Sign in" }).click();
}

const screensOf = (page: Page) => page.getByRole("navigation", { name: "Screens" }).getByRole("link").allTextContents();

beforeAll(async () => {
  ({ t, base } = await startListening());
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe("the web console's administration screens", () => {
  let secret = "";
  let keyId = "";

  it("creates a key with the scopes ticked and shows its secret once", async () => {
    const page = await open();
    await signIn(page, t.adminKey);
    await page.getByRole("heading", { name: "Patients" }).waitFor();
    expect(await screensOf(page)).toEqual(["Patients", "Ingestion", "Log query", "Projects", "API keys", "Audit", "Dead letters"]);
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    // An admin:organizations box is never offered: no key may grant it.
    expect(await page.getByRole("checkbox", { name: /admin:organizations/ }).count()).toBe(0);
    await page.getByLabel("Name", { exact: true }).fill("ward reader");
    await page.getByRole("checkbox", { name: /api:manage-patients/ }).check();
    await page.getByRole("checkbox", { name: /sdk:state-read/ }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("will not be shown again");
    secret = await page.getByLabel("Secret").inputValue();
    expect(secret.length).toBeGreaterThan(20);
    await screenshot(page, "api-keys", true);

    const keys = (await t.app.inject({ method: "GET", url: "/v1/api-keys", headers: t.auth })).json().api_keys as { id: string; name: string; scopes: string[] }[];
    const made = keys.find((k) => k.name === "ward reader");
    expect(made?.scopes.sort()).toEqual(["api:manage-patients", "sdk:state-read"]);
    keyId = made!.id;
    // Once dismissed, the secret is nowhere on the page.
    await page.getByRole("button", { name: "I have copied it" }).click();
    expect(await page.content()).not.toContain(secret);
    await page.close();
  });

  it("lets the new key reach only its screens", async () => {
    const page = await open();
    await signIn(page, secret);
    await page.getByRole("heading", { name: "Patients" }).waitFor();
    expect(await screensOf(page)).toEqual(["Patients", "Log query"]);
    expect(await page.locator(".scopes").textContent()).toBe("api:manage-patients sdk:state-read");
    // Asking for the projects screen by its address says what it needs, and shows nothing of it.
    await page.goto(`${base}/console/#/projects`);
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("api:manage-projects");
    expect(await page.getByRole("heading", { name: "Projects" }).count()).toBe(0);
    await page.close();
  });

  it("revokes the key after a confirmation, and the API then refuses it", async () => {
    const page = await open();
    await signIn(page, t.adminKey);
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("button", { name: "Revoke ward reader" }).click();
    await page.getByRole("group", { name: "Confirm revoking ward reader" }).waitFor();
    await page.getByRole("button", { name: "Yes, revoke" }).click();
    await expect.poll(() => page.locator(`tr[data-key-id="${keyId}"]`).textContent()).toContain("Revoked");
    const r = await fetch(`${base}/v1/auth/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(r.status).toBe(401);
    await page.close();
  });

  it("creates a project, renames it, deprecates and restores it, the project switcher following each change", async () => {
    const page = await open();
    await signIn(page, t.adminKey);
    await page.getByRole("link", { name: "Projects" }).click();
    const switcher = page.getByRole("combobox", { name: "Project", exact: true });
    const choices = () => switcher.locator("option").allTextContents();
    await expect.poll(choices).not.toContain("Cardiology pilot");
    await page.getByLabel("Name", { exact: true }).fill("Cardiology pilot");
    await page.getByLabel("Environment (optional)").fill("staging");
    await page.getByRole("button", { name: "Create project" }).click();
    const table = page.getByRole("table", { name: "Projects" });
    await expect.poll(() => table.textContent()).toContain("cardiology-pilot");
    await expect.poll(choices).toContain("Cardiology pilot");

    await page.getByRole("button", { name: "Rename Cardiology pilot" }).click();
    await page.getByLabel("New name of Cardiology pilot").fill("Cardiology ward");
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => table.textContent()).toContain("Cardiology ward");
    await expect.poll(choices).toContain("Cardiology ward");
    expect(await choices()).not.toContain("Cardiology pilot");
    const listed = (await t.app.inject({ method: "GET", url: "/v1/projects/cardiology-pilot", headers: t.auth })).json();
    expect(listed).toMatchObject({ name: "Cardiology ward", environment: "staging", status: "active" });

    await page.getByRole("button", { name: "Deprecate Cardiology ward" }).click();
    await page.getByRole("button", { name: "Restore Cardiology ward" }).waitFor();
    expect((await t.app.inject({ method: "GET", url: "/v1/projects/cardiology-pilot", headers: t.auth })).json().status).toBe("deprecated");
    await expect.poll(choices).toContain("Cardiology ward (deprecated)");
    await page.getByRole("button", { name: "Restore Cardiology ward" }).click();
    await page.getByRole("button", { name: "Deprecate Cardiology ward" }).waitFor();
    expect((await t.app.inject({ method: "GET", url: "/v1/projects/cardiology-pilot", headers: t.auth })).json().status).toBe("active");
    await expect.poll(choices).toContain("Cardiology ward");
    expect(await choices()).not.toContain("Cardiology ward (deprecated)");

    // Picked there, it is the project the console works in.
    const id = (await t.app.inject({ method: "GET", url: "/v1/projects/cardiology-pilot", headers: t.auth })).json().id as string;
    await switcher.selectOption({ label: "Cardiology ward" });
    await expect.poll(() => switcher.inputValue()).toBe(id);
    await page.close();
  });

  it("shows the audit entries of those actions, filtered by route and by key", async () => {
    const page = await open();
    await signIn(page, t.adminKey);
    await page.getByRole("link", { name: "Audit" }).click();
    const entries = page.getByRole("table", { name: "Audit entries" });
    await expect.poll(() => entries.textContent()).toContain("POST /v1/api-keys");

    await page.getByLabel("Route (e.g. /v1/projects/:id)").fill("/v1/projects/:id");
    await page.getByRole("button", { name: "Filter" }).click();
    const rows = () => entries.locator("tbody tr").allTextContents();
    // The test's own reads of the project (GET /v1/projects/:id) are there too, and nothing else.
    const onlyRoute = async () => (await rows()).every((r) => r.includes(" /v1/projects/:id200"));
    await expect.poll(onlyRoute).toBe(true);
    expect(await rows()).toContainEqual(expect.stringContaining("PATCH /v1/projects/:id"));
    await screenshot(page, "audit", true);

    await page.getByLabel("Route (e.g. /v1/projects/:id)").fill("/v1/api-keys/:id");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(rows).toEqual([expect.stringContaining("DELETE /v1/api-keys/:id")]);

    // The revoked key's own requests: what it read while it was valid.
    await page.getByLabel("Route (e.g. /v1/projects/:id)").fill("");
    await page.getByLabel("API key id").fill(keyId);
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(async () => (await rows()).every((r) => r.includes(keyId))).toBe(true);
    expect(await rows()).toContainEqual(expect.stringContaining("GET /v1/patients"));

    // A time window after everything holds no entry.
    await page.getByLabel("API key id").fill("");
    await page.getByLabel("From (your local time)").fill("2099-01-01T00:00");
    await page.getByRole("button", { name: "Filter" }).click();
    await expect.poll(() => page.getByText(/entries on this page/).textContent()).toBe("0 entries on this page");
    await page.close();
  });

  it("creates a patient with an identifier, then edits them: a changed field is saved, an emptied one cleared", async () => {
    const page = await open();
    await signIn(page, t.adminKey);
    await page.getByRole("button", { name: "New patient" }).click();
    await page.getByLabel("First name").fill("Ines");
    await page.getByLabel("Last name").fill("Barros");
    await page.getByLabel("Date of birth").fill("1971-06-02");
    await page.getByLabel("Sex").fill("female");
    await page.getByLabel("Identifier system (optional)").fill("urn:mrn");
    await page.getByLabel("Identifier value").fill("MRN-7710");
    await page.getByRole("button", { name: "Create patient" }).click();
    await page.getByRole("heading", { name: "Ines Barros" }).waitFor();
    const pid = /#\/patients\/(\w+)/.exec(page.url())![1]!;
    const created = (await t.app.inject({ method: "GET", url: `/v1/patients/${pid}`, headers: t.auth })).json();
    expect(created).toMatchObject({ first_name: "Ines", last_name: "Barros", date_of_birth: "1971-06-02", sex: "female", external_identifiers: [{ system: "urn:mrn", value: "MRN-7710" }] });

    await page.getByRole("button", { name: "Edit patient" }).click();
    await page.getByLabel("Last name").fill("Barros-Silva");
    await page.getByLabel("Sex").fill("");
    await page.getByRole("button", { name: "Save patient" }).click();
    await page.getByRole("heading", { name: "Ines Barros-Silva" }).waitFor();
    expect(await page.locator(".patient-header").textContent()).toContain("Sexnot known");
    const edited = (await t.app.inject({ method: "GET", url: `/v1/patients/${pid}`, headers: t.auth })).json();
    expect(edited).toMatchObject({ first_name: "Ines", last_name: "Barros-Silva", sex: null, date_of_birth: "1971-06-02" });
    await page.close();
  });

  it("lists the project's dead letters with their reason and the message as received", async () => {
    const { nc, topology } = t.services;
    nc.publish(topology.names.ingestSubject("org_default", "prj_default"), "{not json from a glucose meter");
    const page = await open();
    await signIn(page, t.adminKey);
    await page.getByRole("link", { name: "Dead letters" }).click();
    // The device feed sets the message aside asynchronously: load the page again until it is listed.
    await expect
      .poll(async () => {
        await page.reload();
        await page.getByRole("heading", { name: "Dead letters" }).waitFor();
        return page.getByRole("main").textContent();
      }, { timeout: 10_000 })
      .toContain("invalid_json");
    await page.getByText("Show message").first().click();
    expect(await page.locator("pre").first().textContent()).toContain("not json from a glucose meter");
    await page.close();
  });

  it("ran without a page error or a console error (a CSP violation shows as one)", () => {
    expect(problems).toEqual([]);
  });
});
