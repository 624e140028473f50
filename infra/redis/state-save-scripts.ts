import { createHash } from "node:crypto";

/** The Lua scripts a patient's state is saved with, and how their long arguments are sent. */

/**
 * A save of the changed modules only, applied only while the hash still holds the state
 * this one was folded from (its `seq` field is the applied sequence the caller loaded),
 * and its audit when it had one: Redis may have lost the patient or its audit (a restart
 * without persistence, an eviction) since the actor loaded it, or another member working
 * the same partition (a lapsed lease) saved a newer state; the changed modules alone would
 * then stand for the whole. Atomic, so no reader sees a half-written state.
 * KEYS: state hash, events. ARGV: n, the base sequence, n hash field/value args (the meta,
 * the sequence and modules), the score up to which old audit members go ('' keeps them
 * all), '1' when the state had audit rows before this save, then score/member pairs of the
 * new audit members (see auditMembers). Returns 0 when nothing was written.
 */
const SAVE_CHANGED = `
if redis.call('HGET', KEYS[1], 'seq') ~= ARGV[2] then return 0 end
local n = tonumber(ARGV[1])
if ARGV[n + 4] == '1' and redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3, n + 2))
if #ARGV > n + 4 then redis.call('ZADD', KEYS[2], unpack(ARGV, n + 5, #ARGV)) end
if ARGV[n + 3] ~= '' then redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[n + 3]) end
return 1
`;
/**
 * A whole state (a patient's first save, a rebuild), replacing what was there, views
 * included, unless Redis holds a state folded further (a higher `seq`): two members
 * briefly working one partition each rebuild from the stream, and the one that read more
 * of it wins, so the state never goes back. Same ARGV as SAVE_CHANGED; ARGV[2] is the new
 * state's sequence. KEYS: state hash, events, views.
 */
const SAVE_ALL = `
local held = redis.call('HGET', KEYS[1], 'seq')
if held and tonumber(held) > tonumber(ARGV[2]) then return 0 end
local n = tonumber(ARGV[1])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], unpack(ARGV, 3, n + 2))
if #ARGV > n + 4 then redis.call('ZADD', KEYS[2], unpack(ARGV, n + 5, #ARGV)) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[n + 3])
return 1
`;
export const SAVE_SCRIPTS = { changed: { text: SAVE_CHANGED, sha: sha1(SAVE_CHANGED) }, all: { text: SAVE_ALL, sha: sha1(SAVE_ALL) } };
function sha1(text: string): string {
  return createHash("sha1").update(text).digest("hex");
}

/** Arguments at least this long go to Redis as bytes (see asBulkArguments). */
const AS_BYTES_FROM = 1024;

/**
 * A command's long arguments (a save's modules) as Buffers. node-redis joins a command's
 * string arguments into one string, copied on the JavaScript heap before it is written;
 * a Buffer is written as it is, and Buffer.from encodes a flat string straight into
 * memory outside the heap. 8-10% less CPU per save of a hundred logs
 * (bench/save-args.ts); shorter arguments (audit rows) cost more as Buffers than they save.
 */
export function asBulkArguments(texts: string[]): (string | Buffer)[] {
  const out = new Array<string | Buffer>(texts.length);
  for (let i = 0; i < texts.length; i++) out[i] = texts[i]!.length >= AS_BYTES_FROM ? Buffer.from(texts[i]!) : texts[i]!;
  return out;
}
