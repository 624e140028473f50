import { createHash } from "node:crypto";

/** A KV-safe digest of any text (user-chosen keys, external identifiers, API keys). */
export function digest(...parts: string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\u0000");
  return h.digest("base64url");
}
