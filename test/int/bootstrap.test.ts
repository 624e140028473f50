import { afterAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.js";
import { createServices, type Services } from "../../app/services.js";
import { destroyTopology } from "../../infra/nats/topology.js";

const ns = `tb${randomBytes(4).toString("hex")}`;
const opened: Services[] = [];
const dirs: string[] = [];
const start = async (adminKey: string) => {
  const dir = mkdtempSync(join(tmpdir(), "pss-boot-"));
  dirs.push(dir);
  const s = await createServices(loadConfig({ PSS_NAMESPACE: ns, DATA_DIR: dir, PSS_ADMIN_KEY: adminKey, LOG_LEVEL: "silent" }), "api");
  opened.push(s);
  return s;
};
afterAll(async () => {
  await destroyTopology(opened[0]!.nc, ns);
  for (const s of opened) await s.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe("bootstrap", () => {
  it("is idempotent, and a changed PSS_ADMIN_KEY replaces the old one", async () => {
    const first = `first-${randomBytes(12).toString("hex")}`;
    const second = `second-${randomBytes(12).toString("hex")}`;
    const a = await start(first);
    expect((await a.apiKeys.findBySecret(first))?.id).toBe("key_admin");
    const again = await start(first);
    expect((await again.apiKeys.findBySecret(first))?.id).toBe("key_admin");
    expect(await again.projects.resolve("org_default", "default")).toMatchObject({ id: "prj_default", is_default: true });
    const b = await start(second);
    expect((await b.apiKeys.findBySecret(second))?.id).toBe("key_admin");
    expect(await b.apiKeys.findBySecret(first)).toBeNull();
  });
});
