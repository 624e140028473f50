import type { Browser, Page } from "playwright-core";
import { startStack, type TestStack } from "./stack.js";

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

/** A test stack listening on a free loopback port, and the base URL a browser reaches it at. */
export async function startListening(env?: Parameters<typeof startStack>[0]): Promise<{ t: TestStack; base: string }> {
  const t = await startStack(env);
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  return { t, base: `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}` };
}
