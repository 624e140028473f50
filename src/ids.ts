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

/**
 * A ULID: 48 bits of milliseconds then 80 random bits, Crockford base32. Ids sort by
 * creation time, which keeps JetStream and ClickHouse scans local.
 */
export function ulid(now = Date.now()): string {
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let rand = "";
  for (let i = 0; i < 16; i++) rand += CROCKFORD[randomByte() & 31];
  return time + rand;
}

/** A prefixed id such as `pat_01J...`: the prefix tells what an id names in logs and support tickets. */
export function newId(prefix: "org" | "prj" | "key" | "pat" | "log" | "job" | "bat"): string {
  return `${prefix}_${ulid()}`;
}
