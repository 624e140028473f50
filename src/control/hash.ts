import { hash } from "node:crypto";

/**
 * A KV-safe SHA-256 digest (base64url) of any text: user-chosen keys, external
 * identifiers, API keys. One-shot hashing: it sits on the per-log write path.
 */
export function digest(...parts: string[]): string {
  return hash("sha256", parts.length === 1 ? parts[0]! : parts.join("\u0000"), "base64url");
}
