import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { isWrongLastSequence, type JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import { readSubject } from "../../infra/nats/log-history.js";
import type { TopologyNames } from "../../infra/nats/topology.js";
import type { Redis } from "../../infra/redis.js";
import { digest } from "../control/hash.js";

/** Who holds an idempotency key: the log first stored with it. */
export interface Claim {
  log_id: string;
  patient_id: string;
  /** Epoch ms: tells a claim still in flight from one a crash left behind. */
  claimed_at: number;
}

export type ClaimResult = { won: true } | { won: false; existing: Claim };

/** One ledger message: the claims and releases of one group commit, in order. */
export interface LedgerMessage {
  c?: { k: string; l: string; p: string; t: number }[];
  r?: { k: string; l: string }[];
}

type Op =
  | { kind: "claim"; key: string; claim: Claim; done: (r: ClaimResult) => void; fail: (e: Error) => void }
  | { kind: "replace"; key: string; expected: string; claim: Claim; done: (ok: boolean) => void; fail: (e: Error) => void }
  | { kind: "release"; key: string; logId: string; done: (ok: boolean) => void; fail: (e: Error) => void };

/** Folds ledger messages into key → claim: the same rules the writer applied under CAS. */
export function applyLedger(state: Map<string, Claim>, msg: LedgerMessage): void {
  for (const c of msg.c ?? []) state.set(c.k, { log_id: c.l, patient_id: c.p, claimed_at: c.t });
  for (const r of msg.r ?? []) if (state.get(r.k)?.log_id === r.l) state.delete(r.k);
}

const MAX_OPS_PER_COMMIT = 2_000;

/** Index values are "log_id patient_id claimed_at": ids hold no spaces, and this is far cheaper than JSON. */
const encodeClaim = (c: Claim) => `${c.log_id} ${c.patient_id} ${c.claimed_at}`;
function decodeClaim(v: string): Claim {
  const [log_id, patient_id, t] = v.split(" ");
  return { log_id: log_id!, patient_id: patient_id!, claimed_at: Number(t) };
}

/**
 * Per-log idempotency keys that deduplicate forever, at batch cost.
 *
 * Keys of a project are spread over a few shards; each shard is one JetStream subject
 * written only with compare-and-set on its last sequence. Inside a process, each shard
 * group-commits: all claims queued while one commit is in flight go out together in the
 * next message, so concurrent batches share one publish instead of one per log (a
 * publish costs about 20 us of CPU here, a claim in a shared message under 1 us).
 *
 * Redis holds the index (key → claim) and the sequence it reflects. It is a cache:
 * missing, it is rebuilt from the subject; stale (another instance wrote, or a Redis
 * write was lost), the failed compare-and-set says so and the gap is read back.
 */
export class IdempotencyLedger {
  private readonly shards = new Map<string, ShardCommitter>();
  private readonly encoder = new TextEncoder();
  /** Counters for operators: commits, compare-and-set conflicts, index rebuilds. */
  readonly stats = { commits: 0, conflicts: 0, rebuilds: 0, keys: 0 };

  constructor(
    readonly deps: {
      publisher: JetStreamPublisher;
      js: JetStreamClient;
      jsm: JetStreamManager;
      redis: Redis;
      names: TopologyNames;
      redisPrefix: string;
      /** Shards per project: more spreads contention between instances, fewer batches better. @default 8 */
      shardCount?: number;
    },
  ) {}

  keyOf(idempotencyKey: string): string {
    return digest(idempotencyKey);
  }

  private shard(project: string, key: string): ShardCommitter {
    const n = key.charCodeAt(0) % (this.deps.shardCount ?? 8);
    const id = `${project}.${n}`;
    let s = this.shards.get(id);
    if (!s) {
      s = new ShardCommitter(this, project, n);
      this.shards.set(id, s);
    }
    return s;
  }

  claim(project: string, key: string, claim: Claim): Promise<ClaimResult> {
    return new Promise((done, fail) => this.shard(project, key).enqueue({ kind: "claim", key, claim, done, fail }));
  }

  /**
   * Claims many keys at once (a batch's): one promise per batch rather than per key,
   * which keeps allocation, and so garbage collection, off the per-log path.
   */
  claimMany(project: string, items: { key: string; claim: Claim }[]): Promise<ClaimResult[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const out = new Array<ClaimResult>(items.length);
      let left = items.length;
      let failed = false;
      const fail = (e: Error) => {
        if (!failed) reject(e);
        failed = true;
      };
      items.forEach(({ key, claim }, i) => {
        const done = (r: ClaimResult) => {
          out[i] = r;
          if (--left === 0 && !failed) resolve(out);
        };
        this.shard(project, key).enqueue({ kind: "claim", key, claim, done, fail });
      });
    });
  }

  /** Takes over a key only if `expected` still holds it (an orphaned claim). */
  replace(project: string, key: string, expected: string, claim: Claim): Promise<boolean> {
    return new Promise((done, fail) => this.shard(project, key).enqueue({ kind: "replace", key, expected, claim, done, fail }));
  }

  /** Gives a key back when its log could not be stored, so a retry can take it. */
  release(project: string, key: string, logId: string): Promise<boolean> {
    return new Promise((done, fail) => this.shard(project, key).enqueue({ kind: "release", key, logId, done, fail }));
  }

  /**
   * Remembers that these logs (claimed at `claimedAt`) are stored, so a retry is told
   * "duplicate" at once. One hash per claim hour, kept a day: one command per batch.
   */
  async markStored(logIds: string[], claimedAt: number): Promise<void> {
    if (logIds.length === 0) return;
    const key = this.storedKey(claimedAt);
    const fields: string[] = new Array(logIds.length * 2);
    logIds.forEach((id, i) => {
      fields[2 * i] = id;
      fields[2 * i + 1] = "1";
    });
    await this.deps.redis.multi().hSet(key, fields).expire(key, 86_400 + 3_600).execAsPipeline();
  }

  async isMarkedStored(logId: string, claimedAt: number): Promise<boolean> {
    return (await this.deps.redis.hExists(this.storedKey(claimedAt), logId)) === 1;
  }

  private storedKey(claimedAt: number): string {
    return `${this.deps.redisPrefix}:stored:${Math.floor(claimedAt / 3_600_000)}`;
  }

  encode(msg: LedgerMessage): Uint8Array {
    return this.encoder.encode(JSON.stringify(msg));
  }
}

interface IndexRead {
  /** The sequence the Redis index says it reflects; null: the index is gone. */
  seq: number | null;
  values: (string | null)[];
}

/**
 * Commits one shard's operations in order. Two commits overlap: while one waits for its
 * JetStream ack, the next reads the index for its keys, so a commit costs one publish
 * round trip, not a Redis round trip plus a publish.
 */
class ShardCommitter {
  private queue: Op[] = [];
  private running = false;
  private inflight: Promise<void> = Promise.resolve();
  /** Effects of the latest commit, which reads issued before its ack could not see. */
  private recent = new Map<string, Claim | null>();
  /** Sequence of this process's latest commit on the shard (0: none yet). */
  private lastAck = 0;
  /** Bumped when the index changes outside the normal flow; reads from before are stale. */
  private epoch = 0;
  private readonly subject: string;
  private readonly hashKey: string;
  private readonly seqKey: string;

  constructor(
    private readonly ledger: IdempotencyLedger,
    project: string,
    shard: number,
  ) {
    const { names, redisPrefix } = ledger.deps;
    this.subject = names.idempotencySubject(project, shard);
    // One hash tag per shard keeps the index and its sequence in one Redis Cluster slot.
    this.hashKey = `${redisPrefix}:idem:{${project}:${shard}}`;
    this.seqKey = `${redisPrefix}:idemseq:{${project}:${shard}}`;
  }

  enqueue(op: Op): void {
    this.queue.push(op);
    if (!this.running) void this.run();
  }

  private readIndex(keys: string[]): Promise<IndexRead> {
    const { redis } = this.ledger.deps;
    return Promise.all([redis.get(this.seqKey), keys.length ? redis.hmGet(this.hashKey, keys) : Promise.resolve([])]).then(([seq, values]) => ({
      seq: seq === null ? null : Number(seq),
      values,
    }));
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0) {
      const ops = this.queue.splice(0, MAX_OPS_PER_COMMIT);
      const keys = [...new Set(ops.map((o) => o.key))];
      const epoch = this.epoch;
      const prefetch = this.readIndex(keys);
      prefetch.catch(() => undefined);
      await this.inflight;
      this.inflight = this.commit(ops, keys, epoch === this.epoch ? prefetch : null).catch((err: Error) => {
        for (const op of ops) op.fail(err);
      });
    }
    this.running = false;
  }

  private decide(ops: Op[], current: Map<string, Claim>) {
    const msg: LedgerMessage = {};
    const effects = new Map<string, Claim | null>();
    const settle: (() => void)[] = [];
    const claimed = (key: string, c: Claim) => {
      current.set(key, c);
      effects.set(key, c);
      (msg.c ??= []).push({ k: key, l: c.log_id, p: c.patient_id, t: c.claimed_at });
    };
    for (const op of ops) {
      const held = current.get(op.key);
      if (op.kind === "claim") {
        if (held) settle.push(() => op.done({ won: false, existing: held }));
        else {
          claimed(op.key, op.claim);
          settle.push(() => op.done({ won: true }));
        }
      } else if (op.kind === "replace") {
        const ok = held?.log_id === op.expected;
        if (ok) claimed(op.key, op.claim);
        settle.push(() => op.done(ok));
      } else {
        const ok = held?.log_id === op.logId;
        if (ok) {
          current.delete(op.key);
          effects.set(op.key, null);
          (msg.r ??= []).push({ k: op.key, l: op.logId });
        }
        settle.push(() => op.done(ok));
      }
    }
    return { msg, effects, settle };
  }

  private async commit(ops: Op[], keys: string[], prefetch: Promise<IndexRead> | null): Promise<void> {
    const { redis, publisher } = this.ledger.deps;
    let read = prefetch ? await prefetch : await this.readIndex(keys);
    for (let attempt = 0; attempt < 8; attempt++) {
      if (read.seq === null) {
        await this.rebuild();
        read = await this.readIndex(keys);
        continue;
      }
      const current = new Map<string, Claim>();
      keys.forEach((k, i) => {
        const v = read.values[i];
        if (v) current.set(k, decodeClaim(v));
      });
      for (const [k, c] of this.recent) {
        if (c) current.set(k, c);
        else current.delete(k);
      }
      const { msg, effects, settle } = this.decide(ops, current);
      if (!msg.c && !msg.r) {
        for (const s of settle) s();
        return;
      }
      // The index may lag this process's latest commit by one: its ack is the truth.
      const seq = Math.max(read.seq, this.lastAck);
      let ackSeq: number;
      try {
        ackSeq = (await publisher.publish(this.subject, this.ledger.encode(msg), { expectedLastSubjectSequence: seq })).seq;
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
        this.ledger.stats.conflicts++;
        await this.catchUp(seq);
        read = await this.readIndex(keys);
        continue;
      }
      this.lastAck = ackSeq;
      this.recent = effects;
      const m = redis.multi();
      if (msg.c) {
        const fields: string[] = new Array(msg.c.length * 2);
        msg.c.forEach((c, i) => {
          fields[2 * i] = c.k;
          fields[2 * i + 1] = `${c.l} ${c.p} ${c.t}`;
        });
        m.hSet(this.hashKey, fields);
      }
      if (msg.r) m.hDel(this.hashKey, msg.r.map((r) => r.k));
      m.set(this.seqKey, String(ackSeq));
      // The ledger message is durable: settle now. The index update is not awaited; Redis
      // applies it before any later read (one connection, in order), and if it is lost,
      // a later commit's compare-and-set fails and reads the gap back.
      void m.exec().catch(() => undefined);
      this.ledger.stats.commits++;
      this.ledger.stats.keys += msg.c?.length ?? 0;
      for (const s of settle) s();
      return;
    }
    throw new Error(`idempotency shard ${this.subject}: too much contention, retry`);
  }

  /** Forgets what this process knew of the index: it changed outside the normal flow. */
  private resetView(): void {
    this.epoch++;
    this.recent = new Map();
    this.lastAck = 0;
  }

  private async rebuild(): Promise<void> {
    this.ledger.stats.rebuilds++;
    this.resetView();
    const state = new Map<string, Claim>();
    const last = await this.fold(state);
    const { redis } = this.ledger.deps;
    const m = redis.multi();
    m.del(this.hashKey);
    let n = 0;
    for (const [k, c] of state) {
      m.hSet(this.hashKey, k, encodeClaim(c));
      if (++n % 10_000 === 0) await Promise.resolve();
    }
    m.set(this.seqKey, String(last));
    await m.exec();
  }

  /**
   * Reads what other writers appended after `seq` into the index: usually one or two
   * direct gets ("next message on this subject after seq"), not a consumer.
   */
  private async catchUp(seq: number): Promise<void> {
    const { jsm, names, redis } = this.ledger.deps;
    const seen: LedgerMessage[] = [];
    let last = seq;
    for (;;) {
      const m = await jsm.direct.getMessage(names.idempotencyStream, { seq: last + 1, next_by_subj: this.subject }).catch(() => null);
      if (!m) break;
      seen.push(m.json<LedgerMessage>());
      last = m.seq;
    }
    this.resetView();
    if (last === seq) {
      // Nothing after our sequence, yet the compare-and-set failed: the index is wrong.
      await redis.del(this.seqKey);
      return;
    }
    const keys = [...new Set(seen.flatMap((m) => [...(m.c ?? []), ...(m.r ?? [])].map((x) => x.k)))];
    // Releases need the claim they release: start from what the index holds.
    const values = await redis.hmGet(this.hashKey, keys);
    const state = new Map<string, Claim>();
    keys.forEach((k, i) => {
      const v = values[i];
      if (v) state.set(k, decodeClaim(v));
    });
    for (const m of seen) applyLedger(state, m);
    const multi = redis.multi();
    for (const k of keys) {
      const c = state.get(k);
      if (c) multi.hSet(this.hashKey, k, encodeClaim(c));
      else multi.hDel(this.hashKey, k);
    }
    multi.set(this.seqKey, String(last));
    await multi.exec();
  }

  private async fold(state: Map<string, Claim>): Promise<number> {
    const { js, jsm, names } = this.ledger.deps;
    let last = 0;
    for await (const m of readSubject<LedgerMessage>(js, jsm, names.idempotencyStream, this.subject)) {
      applyLedger(state, m.data);
      last = m.seq;
    }
    return last;
  }
}
