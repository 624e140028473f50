import { randomBytes } from "node:crypto";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectNats } from "../../infra/nats/connection.js";
import { JsonKv } from "../../infra/nats/json-kv.js";
import { JWT_SECRET_KEY, loadJwtSecret, sealingKey, unseal, type KeptSecret } from "../../src/auth/jwt-secret.js";
import { startStack, type TestStack } from "../support/stack.js";

/** The JWT signing secret never sits readable in a KV bucket (a NATS client that can read one must learn nothing it could sign with). */
let nc: NatsConnection;
const buckets: string[] = [];
const warnings: unknown[] = [];
const log = { warn: (o: unknown) => void warnings.push(o) };
const adminKey = `admin-${randomBytes(12).toString("hex")}`;

beforeAll(async () => {
  nc = await connectNats(process.env.NATS_URL ?? "nats://127.0.0.1:4222");
});
afterAll(async () => {
  const kvm = new Kvm(nc);
  for (const b of buckets) await (await kvm.open(b)).destroy().catch(() => undefined);
  await nc.close();
});

async function bucket(): Promise<{ kv: KV; json: JsonKv<KeptSecret>; ns: string }> {
  const ns = `j${randomBytes(5).toString("hex")}`;
  buckets.push(`${ns}_config`);
  const kv = await new Kvm(nc).create(`${ns}_config`, { history: 1 });
  return { kv, json: new JsonKv<KeptSecret>(kv), ns };
}
const rawText = async (kv: KV) => (await kv.get(JWT_SECRET_KEY))!.string();

describe("the JWT signing secret kept in the config bucket", () => {
  it("is sealed: a token signed with anything the bucket holds is refused, the service's own tokens verify", async () => {
    const t: TestStack = await startStack();
    try {
      const raw = await t.services.topology.kv.config.get(JWT_SECRET_KEY);
      const kept = raw!.json<KeptSecret>();
      expect(kept).not.toHaveProperty("secret");
      const secret = unseal(kept, sealingKey(t.adminKey, t.config.namespace))!;
      expect(secret.length).toBeGreaterThanOrEqual(32);
      expect(raw!.string()).not.toContain(secret);
      const claims = { org: "org_default", prj: null, scp: ["api:manage-patients"], knd: "access" };
      const sign = (key: string) => new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuer("patient-state-service").setSubject("key_admin").setExpirationTime("5m").sign(new TextEncoder().encode(key));
      for (const field of Object.values(kept) as unknown[]) {
        const forged = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { authorization: `Bearer ${await sign(String(field))}` } });
        expect(forged.statusCode).toBe(401);
      }
      const own = await t.app.inject({ method: "GET", url: "/v1/patients", headers: { authorization: `Bearer ${await sign(secret)}` } });
      expect(own.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it("seals a secret an earlier version kept in the clear, keeping its value so tokens given out stay valid", async () => {
    const { kv, json, ns } = await bucket();
    const clear = `clear-${randomBytes(24).toString("hex")}`;
    await kv.put(JWT_SECRET_KEY, JSON.stringify({ secret: clear }));
    expect(await loadJwtSecret({ jwtSecret: undefined, adminKey, namespace: ns }, json, log)).toBe(clear);
    expect(await rawText(kv)).not.toContain(clear);
    expect(await loadJwtSecret({ jwtSecret: undefined, adminKey, namespace: ns }, json, log)).toBe(clear);
    // With PSS_JWT_SECRET set, a clear one left in the bucket is sealed too.
    const other = await bucket();
    await other.kv.put(JWT_SECRET_KEY, JSON.stringify({ secret: clear }));
    expect(await loadJwtSecret({ jwtSecret: "e".repeat(40), adminKey, namespace: other.ns }, other.json, log)).toBe("e".repeat(40));
    expect(await rawText(other.kv)).not.toContain(clear);
  });

  it("gives every instance of a namespace with the same admin key the same secret, and a new one when the admin key changes", async () => {
    const { json, ns } = await bucket();
    const config = { jwtSecret: undefined, adminKey, namespace: ns };
    const [a, b, c] = await Promise.all([loadJwtSecret(config, json, log), loadJwtSecret(config, json, log), loadJwtSecret(config, json, log)]);
    expect(new Set([a, b, c]).size).toBe(1);
    const before = warnings.length;
    const rotated = await loadJwtSecret({ ...config, adminKey: `${adminKey}-rotated` }, json, log);
    expect(rotated).not.toBe(a);
    expect(warnings.length).toBe(before + 1);
    expect(await loadJwtSecret({ ...config, adminKey: `${adminKey}-rotated` }, json, log)).toBe(rotated);
  });

  it("refuses to start without PSS_JWT_SECRET or an admin key, naming what to set", async () => {
    const { json, ns } = await bucket();
    await expect(loadJwtSecret({ jwtSecret: undefined, adminKey: undefined, namespace: ns }, json, log)).rejects.toThrow(/PSS_JWT_SECRET: set it, or PSS_ADMIN_KEY/);
  });
});
