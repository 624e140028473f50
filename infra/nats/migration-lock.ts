import type { KV } from "@nats-io/kv";
import { isCasConflict } from "./lease-bucket.js";
import type { LogLayout } from "./log-layout.js";

/** Key of the migration lock in the namespace's config bucket. */
export const MIGRATION_LOCK_KEY = "log_layout_migration";

/**
 * The lock's value. `layout` is the layout the copies are made for: a member taking over
 * must copy with the same partition count, whatever its own PSS_PARTITIONS says.
 * `released`: the holder gave up on an error, and a waiter may take over at once.
 */
export interface LockRecord {
  member: string;
  started_at: string;
  beat_at: string;
  layout: LogLayout;
  released?: boolean;
}

export interface LockTiming {
  /** How often a waiting member reads the lock and the layout record. */
  pollMs: number;
  /** How often the holder rewrites the lock. */
  heartbeatMs: number;
  /** A lock not rewritten for this long (as the waiter saw it) belongs to a dead member. */
  staleMs: number;
  /** How often a waiting member says it still waits. */
  logEveryMs: number;
}

export const DEFAULT_LOCK_TIMING: LockTiming = { pollMs: 500, heartbeatMs: 3_000, staleMs: 30_000, logEveryMs: 10_000 };

export interface MigrationLog {
  info(o: object, msg: string): void;
  warn(o: object, msg: string): void;
}

/** The holder's lock was taken over (it stalled past the stale time): it must stop copying. */
export class MigrationLockLost extends Error {
  override name = "MigrationLockLost";
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The lock as held: rewritten every heartbeat with a revision-checked update. */
export class HeldLock {
  private timer: NodeJS.Timeout | null = null;
  private lostTo: string | null = null;

  constructor(
    private readonly config: KV,
    private record: LockRecord,
    private revision: number,
    private readonly heartbeatMs: number,
  ) {
    this.schedule();
  }

  get layout(): LogLayout {
    return this.record.layout;
  }

  /** Throws MigrationLockLost once another member took the lock over. */
  assertHeld(): void {
    if (this.lostTo !== null) throw new MigrationLockLost(`another member (${this.lostTo}) took the log layout migration over`);
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.beat(), this.heartbeatMs);
  }

  private async beat(): Promise<void> {
    const next = { ...this.record, beat_at: new Date().toISOString() };
    try {
      this.revision = await this.config.update(MIGRATION_LOCK_KEY, JSON.stringify(next), this.revision);
      this.record = next;
    } catch (err) {
      // A failed write for another reason (NATS busy) is tried again next beat.
      if (isCasConflict(err)) {
        this.lostTo = (await this.config.get(MIGRATION_LOCK_KEY).catch(() => null))?.json<LockRecord>().member ?? "unknown";
        return;
      }
    }
    if (this.timer !== null) this.schedule();
  }

  /** Stops renewing the lock and leaves it as it is (what a crash does). */
  forget(): void {
    this.stopBeating();
  }

  private stopBeating(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** The migration is done: the lock goes (only if still ours). */
  async release(): Promise<void> {
    this.stopBeating();
    if (this.lostTo === null) await this.config.delete(MIGRATION_LOCK_KEY, { previousSeq: this.revision }).catch(() => undefined);
  }

  /**
   * The holder failed: the lock stays with its layout (copies already made follow it),
   * marked for a waiter to take over at once rather than after the stale time.
   */
  async abandon(): Promise<void> {
    this.stopBeating();
    if (this.lostTo !== null) return;
    await this.config.update(MIGRATION_LOCK_KEY, JSON.stringify({ ...this.record, released: true }), this.revision).catch(() => undefined);
  }
}

async function readLock(config: KV): Promise<{ record: LockRecord; revision: number } | null> {
  const e = await config.get(MIGRATION_LOCK_KEY);
  if (!e || e.operation !== "PUT" || e.length === 0) return null;
  return { record: e.json<LockRecord>(), revision: e.revision };
}

/** Whether a migration was started and not finished (its lock is still there). */
export async function migrationUnfinished(config: KV): Promise<boolean> {
  return (await readLock(config)) !== null;
}

/**
 * Takes the migration lock for `layout`, or waits for its holder: returns the lock held
 * (its layout is the one to copy for: a taken-over lock keeps the first holder's), or null
 * once `done()` says the migration finished elsewhere.
 */
export async function acquireOrWait(config: KV, member: string, layout: LogLayout, timing: LockTiming, done: () => Promise<boolean>, log: MigrationLog): Promise<HeldLock | null> {
  const now = () => new Date().toISOString();
  const since = Date.now();
  // The first sight of a holder is logged at once: it says why the start pauses.
  let lastLog = 0;
  let seen = { revision: -1, at: since };
  for (;;) {
    if (await done()) return null;
    const held = await readLock(config);
    if (!held) {
      const record: LockRecord = { member, started_at: now(), beat_at: now(), layout };
      try {
        return new HeldLock(config, record, await config.create(MIGRATION_LOCK_KEY, JSON.stringify(record)), timing.heartbeatMs);
      } catch (err) {
        // Another member took it first: wait for that one.
        if (!isCasConflict(err)) throw err;
        continue;
      }
    }
    if (held.revision !== seen.revision) seen = { revision: held.revision, at: Date.now() };
    const stale = Date.now() - seen.at >= timing.staleMs;
    if (stale || held.record.released) {
      const record: LockRecord = { ...held.record, member, beat_at: now(), released: false };
      try {
        const lock = new HeldLock(config, record, await config.update(MIGRATION_LOCK_KEY, JSON.stringify(record), held.revision), timing.heartbeatMs);
        log.warn({ from: held.record.member, stale_ms: Date.now() - seen.at }, `took the log layout migration over from ${held.record.member}, which ${held.record.released ? "gave it up" : "stopped renewing its lock"}`);
        return lock;
      } catch (err) {
        if (!isCasConflict(err)) throw err;
        continue;
      }
    }
    if (Date.now() - lastLog >= timing.logEveryMs) {
      lastLog = Date.now();
      log.info({ holder: held.record.member, waited_ms: Date.now() - since }, `waiting for ${held.record.member} to finish migrating the log stream to the partitioned layout`);
    }
    await sleep(timing.pollMs);
  }
}
