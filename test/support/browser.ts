import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's chromium (`.ci/run` installs it): never a downloaded browser. */
export const CHROMIUM = process.env.PSS_CHROMIUM ?? "/usr/bin/chromium";

/** Headless Chromium from the machine's package; running as root needs the sandbox off. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does), or set PSS_CHROMIUM`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"] });
}

/** A README screenshot of the console (docs/console/{name}.png), taken only when asked (PSS_SCREENSHOTS=1), so that a test run leaves the tree as it was. */
export async function screenshot(page: Page, name: string, fullPage = false): Promise<void> {
  if (process.env.PSS_SCREENSHOTS === "1") await page.screenshot({ path: `docs/console/${name}.png`, fullPage });
}
