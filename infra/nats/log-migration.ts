import { hostname } from "node:os";
import { LOG_LAYOUT_KEY, type LayoutDeps, type LogLayout } from "./log-layout.js";
import { copyLegacyLogs, countAfter, type CopyResult } from "./legacy-log-copy.js";
import { isCasConflict } from "./lease-bucket.js";
import { topologyNames } from "./topology.js";
import { acquireOrWait, DEFAULT_LOCK_TIMING, MigrationLockLost, type HeldLock, type LockTiming, type MigrationLog } from "./migration-lock.js";

/** Settings of a migration; tests shorten the waits and stop a copy midway. */
export interface MigrationOptions extends LockTiming {
  /** Who this member is, in the lock and the log lines. */
  member: string;
  /** Publishes awaiting their ack at most. */
  window: number;
  /** Copies at most this many and then fails as a crash would (tests only). */
  copyLimit?: number;
  /** How often the copy logs its progress. */
  progressEveryMs: number;
  /** Called once the lock is held, before copying (tests hold a migration there). */
  beforeCopy?: () => Promise<void>;
}

const defaults = (): MigrationOptions => ({ ...DEFAULT_LOCK_TIMING, member: `${hostname()}-${process.pid}`, window: 256, progressEveryMs: 10_000 });

/** A copy stopped by `copyLimit`: the stand-in for a crash in tests. */
export class MigrationStopped extends Error {
  override name = "MigrationStopped";
}

const consoleLog: MigrationLog = {
  info: (o, msg) => console.info(msg, o),
  warn: (o, msg) => console.warn(msg, o),
};

async function layoutRecorded(deps: LayoutDeps): Promise<boolean> {
  const e = await deps.config.get(LOG_LAYOUT_KEY);
  return !!e && e.operation === "PUT" && e.length > 0;
}

/*
 * Redis keys that hold sequences of the log stream, and why none is cleared here (every
 * copy gets a sequence above every original's, as the stream only grows):
 * - a patient's state (`applied_seq`, `module_seq`): saved under the first layout's
 *   fingerprint (STATE_LAYOUT_VERSION 1), so it is rebuilt from its new subject on its next
 *   load, and that rebuild reads the patient's whole history in one go;
 * - `acc:{project}` (highest sequence accepted per patient, read-your-writes): an original's
 *   sequence is below every copy's, so a reader waits for nothing that is not there, and a
 *   stale state is rebuilt before it is served (its fingerprint differs);
 * - `{ns}:projected` (the ClickHouse projector's position): rewritten by the next projector,
 *   which starts after the highest `stream_seq` its copy holds, so it inserts the copies
 *   again; the log query reads `logs FINAL`, which keeps one row per log id;
 * - the idempotency and log-id ledgers: sequences of their own streams, and log ids, which
 *   the copies keep (same bodies).
 */

/**
 * Moves every message of the first layout's subjects to the partitioned ones and records
 * `layout` (see docs/operations.md). One member copies under a lock in the config bucket;
 * the others wait for the record. The copy resumes where a crashed one stopped.
 */
export async function migrateLegacyLogLayout(deps: LayoutDeps, layout: LogLayout): Promise<void> {
  const opts = { ...defaults(), ...deps.migration };
  const log = deps.log ?? consoleLog;
  const lock = await acquireOrWait(deps.config, opts.member, layout, opts, () => layoutRecorded(deps), log);
  if (!lock) return;
  try {
    if (await layoutRecorded(deps)) return await lock.release();
    await opts.beforeCopy?.();
    await migrateHolding(deps, lock, opts, log);
    await lock.release();
  } catch (err) {
    if (err instanceof MigrationStopped) {
      // As a crash leaves it: the lock stays, no longer renewed.
      lock.forget();
      throw err;
    }
    if (err instanceof MigrationLockLost) {
      // The member that took over finishes; this one waits for its record like any other.
      log.warn({ member: opts.member }, err.message);
      return;
    }
    await lock.abandon();
    throw err;
  }
}

async function migrateHolding(deps: LayoutDeps, lock: HeldLock, opts: MigrationOptions, log: MigrationLog): Promise<void> {
  const { names } = deps;
  // The copies follow the lock's layout: a member that took over keeps the first holder's.
  const layout = lock.layout;
  const copyDeps = { ...deps, names: topologyNames(names.namespace, layout.partitions) };
  const started = Date.now();
  log.info({ partitions: layout.partitions, member: opts.member }, "migrating the log stream to the partitioned layout: copying every log of the first layout's subjects");
  let copied = 0;
  for (;;) {
    const r = await copyRound(copyDeps, lock, opts, log, copied);
    copied += r.copied;
    if (opts.copyLimit !== undefined && copied >= opts.copyLimit) throw new MigrationStopped(`stopped after ${copied} copies (copyLimit)`);
    // Only what was copied goes: an original stored meanwhile stays for the next round.
    if (r.through > 0) await deps.jsm.streams.purge(names.logsStream, { filter: names.legacyLogSubjects, seq: r.through + 1 });
    if ((await countAfter(deps.jsm, names.logsStream, names.legacyLogSubjects)) === 0) break;
  }
  await deps.jsm.consumers.delete(names.logsStream, names.legacyStateConsumer).catch((err: Error) => {
    if (!/consumer not found/i.test(err.message)) throw err;
  });
  try {
    await deps.config.create(LOG_LAYOUT_KEY, JSON.stringify(layout));
  } catch (err) {
    if (!isCasConflict(err)) throw err;
  }
  const seconds = (Date.now() - started) / 1000;
  log.info({ messages_copied: copied, seconds, messages_per_second: Math.round(copied / Math.max(seconds, 0.001)) }, "the log stream is migrated to the partitioned layout");
}

async function copyRound(deps: LayoutDeps, lock: HeldLock, opts: MigrationOptions, log: MigrationLog, before: number): Promise<CopyResult> {
  let lastLog = Date.now();
  return copyLegacyLogs(deps, {
    window: opts.window,
    ...(opts.copyLimit !== undefined ? { limit: opts.copyLimit - before } : {}),
    assertHeld: () => lock.assertHeld(),
    progress: (copied, total) => {
      if (Date.now() - lastLog < opts.progressEveryMs) return;
      lastLog = Date.now();
      log.info({ copied: before + copied, remaining: total - copied }, `migrating the log stream: ${before + copied} messages copied, ${total - copied} to go`);
    },
  });
}
