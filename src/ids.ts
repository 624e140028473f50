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

/** The random part of the last id, as base32 digits, and its millisecond. */
const lastRandom = new Uint8Array(16);
let lastMs = -1;

/**
 * A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32. Ids sort by
 * creation time, which keeps JetStream and ClickHouse scans local. Within one millisecond
 * the random part of the previous id is incremented (ULID's monotonic mode), so the ids
 * of a batch's logs sort in the order they were accepted: the fold breaks timestamp ties
 * by log id. Built as char codes and made a string once: appending a character at a time
 * made 26 intermediate strings per id, on the write path's every log.
 */
export function ulid(now = Date.now()): string {
  let t = now;
  for (let i = 9; i >= 0; i--) {
    codes[i] = ALPHABET[t % 32]!;
    t = Math.floor(t / 32);
  }
  if (now !== lastMs || !incrementRandom()) {
    for (let i = 0; i < 16; i++) lastRandom[i] = randomByte() & 31;
    lastMs = now;
  }
  for (let i = 0; i < 16; i++) codes[10 + i] = ALPHABET[lastRandom[i]!]!;
  return String.fromCharCode.apply(null, codes as unknown as number[]);
}

/** Adds one to the random part; false when it is all ones (then a fresh one is drawn: 2^-80 odds). */
function incrementRandom(): boolean {
  for (let i = 15; i >= 0; i--) {
    if (lastRandom[i]! < 31) {
      lastRandom[i]!++;
      return true;
    }
    lastRandom[i] = 0;
  }
  return false;
}

/** A prefixed id such as `pat_01J...`: the prefix tells what an id names in logs and support tickets. */
export function newId(prefix: "org" | "prj" | "key" | "pat" | "log" | "job" | "bat"): string {
  return `${prefix}_${ulid()}`;
}

/**
 * Whether `t` reads as one of the service's ids (organization, project, patient): 1 to 64
 * letters, digits, `_` or `-`. So also a safe NATS subject token: no `.`, no wildcard.
 */
export const isIdToken = (t: unknown): t is string => typeof t === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(t);
