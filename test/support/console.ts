import type { Browser, Page } from "playwright-core";

/**
 * A console page at `url`, signed in with `credential`, whose page errors and console
 * errors are pushed to `problems` (a CSP violation shows as one). A refused credential's
 * 401 and 403 are the browser's own console lines, not the page's faults.
 */
export async function openConsole(browser: Browser, url: string, credential: string, problems: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !/status of 40[13]/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  await page.goto(url);
  await page.getByLabel("API key or token").fill(credential);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}
