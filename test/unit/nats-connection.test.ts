import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nkeys } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { natsConnectOptions } from "../../infra/nats/connection.js";

/** What an authenticator answers the server's challenge with. */
const answer = (o: ReturnType<typeof natsConnectOptions>) => Object.assign({}, ...(o.authenticator ?? []).map((a) => a("nonce")));

describe("the service's NATS connection options", () => {
  it("take a user and password written into NATS_URL out of the address, as nats.js would ignore them there", () => {
    const o = natsConnectOptions({ natsUrl: "nats://pss:p%40ss%3Aw0rd@nats.internal:4223" });
    expect(o.servers).toBe("nats://nats.internal:4223");
    expect(answer(o)).toEqual({ user: "pss", pass: "p@ss:w0rd" });
    expect(answer(natsConnectOptions({ natsUrl: "nats://s3cr3t-token@127.0.0.1:4222" }))).toEqual({ auth_token: "s3cr3t-token" });
    expect(natsConnectOptions({ natsUrl: "nats://127.0.0.1:4222" })).toEqual({ servers: "nats://127.0.0.1:4222" });
  });

  it("sign the server's challenge with the nkey seed of NATS_NKEY_SEED_FILE", () => {
    const dir = mkdtempSync(join(tmpdir(), "pss-nkey-"));
    try {
      const kp = nkeys.createUser();
      writeFileSync(join(dir, "service.nk"), `${new TextDecoder().decode(kp.getSeed())}\n`);
      const creds = answer(natsConnectOptions({ natsUrl: "nats://127.0.0.1:4222", natsNkeySeedFile: join(dir, "service.nk") }));
      expect(creds.nkey).toBe(kp.getPublicKey());
      expect(kp.verify(new TextEncoder().encode("nonce"), Buffer.from(creds.sig, "base64url"))).toBe(true);
      expect(() => natsConnectOptions({ natsUrl: "nats://127.0.0.1:4222", natsNkeySeedFile: join(dir, "missing.nk") })).toThrow(/^NATS_NKEY_SEED_FILE: cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
