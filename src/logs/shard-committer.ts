import { isWrongLastSequence } from "../../infra/nats/jetstream-publisher.js";
import { readSubject } from "../../infra/nats/log-history.js";
import type { IdempotencyLedger } from "./idempotency-ledger.js";
import { applyLedger, decodeClaim, decodeLedger, encodeClaim, type Claim, type ClaimResult, type LedgerEntry } from "./ledger-codec.js";

/** The results of some ledger operations, delivered together once all are settled. */
export class Results<R> {
  private readonly out: R[];
  private left: number;
  private failed = false;

  constructor(
    n: number,
    private readonly resolve: (r: R[]) => void,
    private readonly reject: (e: Error) => void,
  ) {
    this.out = new Array<R>(n);
    this.left = n;
  }

  done(i: number, r: R): void {
    this.out[i] = r;
    if (--this.left === 0 && !this.failed) this.resolve(this.out);
  }

  fail(e: Error): void {
    if (!this.failed) this.reject(e);
    this.failed = true;
  }
}

/** An operation waiting for its shard's next commit; `index` is its place in `results`. */
export type Op =
  | { kind: "claim"; key: string; claim: Claim; results: Results<ClaimResult>; index: number }
  | { kind: "peek"; key: string; results: Results<Claim | null>; index: number }
  | { kind: "replace"; key: string; expected: string; claim: Claim; results: Results<boolean>; index: number }
  | { kind: "release"; key: string; logId: string; results: Results<boolean>; index: number };

const MAX_OPS_PER_COMMIT = 2_000;

const WON: ClaimResult = Object.freeze({ won: true });

type Outcome = ClaimResult | boolean | Claim | null;

/** Delivers each operation's outcome, in the order they were decided. */
function settleAll(ops: readonly Op[], outcomes: readonly Outcome[]): void {
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    (op.results as Results<Outcome>).done(op.index, outcomes[i]!);
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
export class ShardCommitter {
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
    space: string,
    shard: number,
  ) {
    const { redisPrefix } = ledger.deps;
    const { indexKind } = ledger.store;
    this.subject = ledger.store.subject(space, shard);
    // One hash tag per shard keeps the index and its sequence in one Redis Cluster slot.
    this.hashKey = `${redisPrefix}:${indexKind}:{${space}:${shard}}`;
    this.seqKey = `${redisPrefix}:${indexKind}seq:{${space}:${shard}}`;
  }

  /** Keeps the index for as long as the store keeps its claims. */
  private expire(m: { expire(key: string, seconds: number): unknown }): void {
    const ttl = this.ledger.store.ttlSeconds;
    if (ttl !== undefined) {
      m.expire(this.hashKey, ttl);
      m.expire(this.seqKey, ttl);
    }
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
        for (const op of ops) op.results.fail(err);
      });
    }
    this.running = false;
  }

  /**
   * Applies the operations in order to `current`: the message lines, the index's new
   * field/value pairs and removed fields, each operation's outcome (settled once the
   * message is stored), and what changed per key.
   */
  private decide(ops: Op[], current: Map<string, Claim>) {
    const lines: string[] = [];
    const indexSet: string[] = [];
    const indexDel: string[] = [];
    const outcomes = new Array<Outcome>(ops.length);
    const effects = new Map<string, Claim | null>();
    const claimed = (key: string, c: Claim) => {
      current.set(key, c);
      effects.set(key, c);
      const value = encodeClaim(c);
      lines.push(`c ${key} ${value}`);
      indexSet.push(key, value);
    };
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const held = current.get(op.key);
      if (op.kind === "peek") outcomes[i] = held ?? null;
      else if (op.kind === "claim") {
        if (held) outcomes[i] = { won: false, existing: held };
        else {
          claimed(op.key, op.claim);
          outcomes[i] = WON;
        }
      } else if (op.kind === "replace") {
        const ok = held?.log_id === op.expected;
        if (ok) claimed(op.key, op.claim);
        outcomes[i] = ok;
      } else {
        const ok = held?.log_id === op.logId;
        if (ok) {
          current.delete(op.key);
          effects.set(op.key, null);
          lines.push(`r ${op.key} ${op.logId}`);
          indexDel.push(op.key);
        }
        outcomes[i] = ok;
      }
    }
    return { lines, indexSet, indexDel, effects, outcomes };
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
      for (let i = 0; i < keys.length; i++) {
        const v = read.values[i];
        if (v) current.set(keys[i]!, decodeClaim(v));
      }
      for (const [k, c] of this.recent) {
        if (c) current.set(k, c);
        else current.delete(k);
      }
      const { lines, indexSet, indexDel, effects, outcomes } = this.decide(ops, current);
      if (lines.length === 0) {
        settleAll(ops, outcomes);
        return;
      }
      // The index may lag this process's latest commit by one: its ack is the truth.
      const seq = Math.max(read.seq, this.lastAck);
      let ackSeq: number;
      try {
        ackSeq = (await publisher.publish(this.subject, this.ledger.encode(lines), { expectedLastSubjectSequence: seq })).seq;
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
      if (indexSet.length > 0) m.hSet(this.hashKey, indexSet);
      if (indexDel.length > 0) m.hDel(this.hashKey, indexDel);
      m.set(this.seqKey, String(ackSeq));
      this.expire(m);
      // The ledger message is durable: settle now. The index update is not awaited; Redis
      // applies it before any later read (one connection, in order), and if it is lost,
      // a later commit's compare-and-set fails and reads the gap back.
      void m.exec().catch(() => undefined);
      this.ledger.stats.commits++;
      this.ledger.stats.keys += indexSet.length / 2;
      settleAll(ops, outcomes);
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
    this.expire(m);
    await m.exec();
  }

  /**
   * Reads what other writers appended after `seq` into the index: usually one or two
   * direct gets ("next message on this subject after seq"), not a consumer.
   */
  private async catchUp(seq: number): Promise<void> {
    const { jsm, redis } = this.ledger.deps;
    const seen: LedgerEntry[][] = [];
    let last = seq;
    for (;;) {
      const m = await jsm.direct.getMessage(this.ledger.store.stream, { seq: last + 1, next_by_subj: this.subject }).catch(() => null);
      if (!m) break;
      seen.push(decodeLedger(m.data));
      last = m.seq;
    }
    this.resetView();
    if (last === seq) {
      // Nothing after our sequence, yet the compare-and-set failed: the index is wrong.
      await redis.del(this.seqKey);
      return;
    }
    const keys = [...new Set(seen.flatMap((entries) => entries.map((e) => e.key)))];
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
    this.expire(multi);
    await multi.exec();
  }

  private async fold(state: Map<string, Claim>): Promise<number> {
    const { js, jsm } = this.ledger.deps;
    let last = 0;
    for await (const m of readSubject(js, jsm, this.ledger.store.stream, this.subject, { decode: decodeLedger })) {
      applyLedger(state, m.data);
      last = m.seq;
    }
    return last;
  }
}
