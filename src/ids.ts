import { randomFillSync } from "node:crypto";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

// Random bytes come from a pool refilled 4 KiB at a time: one syscall-backed fill per
// 256 ids instead of one per id, which mattered on the write path (an id per log).
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** Char codes of the 26 characters of an id being built: one buffer, reused. */
const codes = new Uint16Array(26);
const ALPHABET = Uint16Array.from(CROCKFORD, (c) => c.charCodeAt(0));

/**
 * A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32. Ids sort by
 * creation time, which keeps JetStream and ClickHouse scans local. Built as char codes
 * and made a string once: appending a character at a time made 26 intermediate strings
 * per id, on the write path's every log.
 */
export function ulid(now = Date.now()): string {
  let t = now;
  for (let i = 9; i >= 0; i--) {
    codes[i] = ALPHABET[t % 32]!;
    t = Math.floor(t / 32);
  }
  for (let i = 10; i < 26; i++) codes[i] = ALPHABET[randomByte() & 31]!;
  return String.fromCharCode.apply(null, codes as unknown as number[]);
}

/** A prefixed id such as `pat_01J...`: the prefix tells what an id names in logs and support tickets. */
export function newId(prefix: "org" | "prj" | "key" | "pat" | "log" | "job" | "bat"): string {
  return `${prefix}_${ulid()}`;
}
