import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { isKvConflict, type JsonKv } from "../../infra/nats/json-kv.js";
import { generateJwtSecret } from "./tokens.js";

/** The config bucket's key of the JWT signing secret. */
export const JWT_SECRET_KEY = "jwt_secret";

/**
 * The secret as the config bucket keeps it: AES-256-GCM under a key derived (HKDF-SHA256)
 * from the bootstrap admin key and the namespace, so a client that can read the bucket
 * learns nothing it could sign with. `{ secret }` is how earlier versions kept it, in the
 * clear; it is encrypted in place the first time it is read.
 */
export type KeptSecret = { v: 1; iv: string; tag: string; data: string } | { secret: string };

interface Logger {
  warn(obj: unknown, msg?: string): void;
}

/** The 256-bit key that seals the secret: every instance given the same admin key and namespace derives the same one. */
export function sealingKey(adminKey: string, namespace: string): Buffer {
  return Buffer.from(hkdfSync("sha256", adminKey, `pss:${namespace}`, "jwt-secret/aes-256-gcm/v1", 32));
}

const aad = Buffer.from(JWT_SECRET_KEY);

export function seal(secret: string, key: Buffer): KeptSecret {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(aad);
  const data = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return { v: 1, iv: iv.toString("base64url"), tag: cipher.getAuthTag().toString("base64url"), data: data.toString("base64url") };
}

/** The secret, or null when it was sealed under another key (or is not a sealed secret at all). */
export function unseal(kept: KeptSecret, key: Buffer): string | null {
  if (!("v" in kept) || typeof kept.iv !== "string" || typeof kept.tag !== "string" || typeof kept.data !== "string") return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(kept.iv, "base64url")).setAAD(aad);
    decipher.setAuthTag(Buffer.from(kept.tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(kept.data, "base64url")), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/**
 * The secret kept in the bucket, sealed: made the first time (when `create`), a clear
 * one sealed in place (the same secret, so tokens already given out stay valid), and one
 * sealed under another admin key replaced by a new one (`create`: PSS_ADMIN_KEY changed,
 * so tokens minted before stop verifying, as the old key did). Compare-and-set
 * throughout, so instances starting together agree on one.
 */
async function keptSecret(kv: JsonKv<KeptSecret>, key: Buffer, create: boolean, log: Logger): Promise<string | null> {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const cur = await kv.get(JWT_SECRET_KEY);
      if (!cur) {
        if (!create) return null;
        await kv.create(JWT_SECRET_KEY, seal(generateJwtSecret(), key));
        continue;
      }
      if ("secret" in cur.value && typeof cur.value.secret === "string") {
        await kv.update(JWT_SECRET_KEY, seal(cur.value.secret, key), cur.revision);
        return cur.value.secret;
      }
      const secret = unseal(cur.value, key);
      if (secret !== null || !create) return secret;
      log.warn({ bucket_key: JWT_SECRET_KEY }, "the JWT signing secret was sealed under another PSS_ADMIN_KEY: a new one replaces it, and tokens minted before no longer verify");
      await kv.update(JWT_SECRET_KEY, seal(generateJwtSecret(), key), cur.revision);
    } catch (err) {
      if (!isKvConflict(err)) throw err;
    }
  }
  throw new Error("the JWT signing secret in the config bucket kept changing while it was read; start again");
}

/**
 * The HS256 secret of JWTs and patient tokens: PSS_JWT_SECRET when set, else one secret
 * shared by every instance of the namespace, kept across restarts in the config bucket
 * sealed under the admin key (see KeptSecret). Needs one of PSS_JWT_SECRET and an admin
 * key (PSS_ADMIN_KEY, or the one `npm start` keeps in DATA_DIR/admin-key).
 */
export async function loadJwtSecret(
  config: { jwtSecret: string | undefined; adminKey: string | undefined; namespace: string },
  kv: JsonKv<KeptSecret>,
  log: Logger,
): Promise<string> {
  // With PSS_JWT_SECRET set, the bucket is only read to seal a clear secret left there.
  const kept = config.adminKey ? await keptSecret(kv, sealingKey(config.adminKey, config.namespace), config.jwtSecret === undefined, log) : null;
  if (config.jwtSecret) return config.jwtSecret;
  if (kept === null) throw new Error("PSS_JWT_SECRET: set it, or PSS_ADMIN_KEY (the secret the service keeps in NATS is sealed under a key derived from it)");
  return kept;
}
