import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { isWrongLastSequence, type JetStreamPublisher } from "../../infra/nats/jetstream-publisher.js";
import { readSubject } from "../../infra/nats/log-history.js";
import type { TopologyNames } from "../../infra/nats/topology.js";
import type { Redis } from "../../infra/redis/connection.js";
import { digest } from "../control/hash.js";

/** Who holds an idempotency key: the log first stored with it. */
export interface Claim {
  log_id: string;
  patient_id: string;
  /** Epoch ms: tells a claim still in flight from one a crash left behind. */
  claimed_at: number;
}

export type ClaimResult = { won: true } | { won: false; existing: Claim };

/** One step of a ledger message: a claim (`c`) or a release (`r`) of a key. */
export type LedgerEntry = { op: "c"; key: string; claim: Claim } | { op: "r"; key: string; logId: string };

/**
 * Claims, then releases, as JSON: the ledger's first message format. Its stream keeps
 * every message for good (keys deduplicate forever), so its subjects may hold some.
 */
interface JsonLedgerMessage {
  c?: { k: string; l: string; p: string; t: number }[];
  r?: { k: string; l: string }[];
}

/** The results of some ledger operations, delivered together once all are settled. */
class Results<R> {
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
type Op =
  | { kind: "claim"; key: string; claim: Claim; results: Results<ClaimResult>; index: number }
  | { kind: "peek"; key: string; results: Results<Claim | null>; index: number }
  | { kind: "replace"; key: string; expected: string; claim: Claim; results: Results<boolean>; index: number }
  | { kind: "release"; key: string; logId: string; results: Results<boolean>; index: number };

/**
 * A ledger message is text, one line per step of the group commit, in the order decided:
 * `c <key> <log_id> <patient_id> <claimed_at>` or `r <key> <log_id>`. The part after the
 * key of a claim is the index value (encodeClaim), built once for both. Ids and keys
 * hold no spaces. Messages of the first format (JsonLedgerMessage) decode too.
 * A step the writer could not have written (a message some other NATS client published
 * on the subject) is left out, so a shard's readers never fail on it and its writes go on.
 */
export function decodeLedger(data: Uint8Array | string): LedgerEntry[] {
  const text = typeof data === "string" ? data : textDecoder.decode(data);
  if (text.startsWith("{")) return decodeJsonLedger(text);
  const out: LedgerEntry[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("c ")) {
      const at = line.indexOf(" ", 2);
      const claim = at > 2 ? decodeClaim(line.slice(at + 1)) : null;
      if (claim && isClaim(claim)) out.push({ op: "c", key: line.slice(2, at), claim });
    } else if (line.startsWith("r ")) {
      const [, key, logId, extra] = line.split(" ");
      if (key && logId && extra === undefined) out.push({ op: "r", key, logId });
    }
  }
  return out;
}

const isText = (v: unknown): v is string => typeof v === "string" && v !== "" && !v.includes(" ");
const isClaim = (c: Claim) => isText(c.log_id) && isText(c.patient_id) && Number.isFinite(c.claimed_at);

function decodeJsonLedger(text: string): LedgerEntry[] {
  let msg: JsonLedgerMessage;
  try {
    msg = JSON.parse(text) as JsonLedgerMessage;
  } catch {
    return [];
  }
  const list = <T>(v: T[] | undefined): unknown[] => (Array.isArray(v) ? v : []);
  const out: LedgerEntry[] = [];
  for (const c of list(msg?.c) as Partial<{ k: unknown; l: unknown; p: unknown; t: unknown }>[]) {
    const claim = { log_id: c?.l, patient_id: c?.p, claimed_at: c?.t } as Claim;
    if (isText(c?.k) && isClaim(claim)) out.push({ op: "c", key: c.k, claim });
  }
  for (const r of list(msg?.r) as Partial<{ k: unknown; l: unknown }>[]) if (isText(r?.k) && isText(r?.l)) out.push({ op: "r", key: r.k, logId: r.l });
  return out;
}

/** Folds a ledger message into key → claim, step by step: the rules the writer applied under CAS. */
export function applyLedger(state: Map<string, Claim>, entries: readonly LedgerEntry[]): void {
  for (const e of entries) {
    if (e.op === "c") state.set(e.key, e.claim);
    else if (state.get(e.key)?.log_id === e.logId) state.delete(e.key);
  }
}

const textDecoder = new TextDecoder();

const MAX_OPS_PER_COMMIT = 2_000;

/** Index values are "log_id patient_id claimed_at": ids hold no spaces, and this is far cheaper than JSON. */
const encodeClaim = (c: Claim) => `${c.log_id} ${c.patient_id} ${c.claimed_at}`;
function decodeClaim(v: string): Claim {
  const [log_id, patient_id, t] = v.split(" ");
  return { log_id: log_id!, patient_id: patient_id!, claimed_at: Number(t) };
}

/**
 * Where a ledger keeps its claims: compare-and-set subjects of one stream, and their
 * index in Redis under `{prefix}:{indexKind}:{space:shard}`.
 */
export interface LedgerStore {
  stream: string;
  subject(space: string, shard: number): string;
  indexKind: string;
  /** Seconds a space's Redis index lives after its latest commit; unset: for good. */
  ttlSeconds?: number;
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
      /** Shards per space: more spreads contention between instances, fewer batches better. @default 8 */
      shardCount?: number;
      /** @default the idempotency stream, kept for good */
      store?: LedgerStore;
    },
  ) {
    this.store = deps.store ?? { stream: deps.names.idempotencyStream, subject: deps.names.idempotencySubject, indexKind: "idem" };
  }

  readonly store: LedgerStore;

  keyOf(idempotencyKey: string): string {
    return digest(idempotencyKey);
  }

  /** A space is where keys are unique: a project, or (for a ledger kept a while) a project's day. */
  private shard(space: string, key: string): ShardCommitter {
    const n = key.charCodeAt(0) % (this.deps.shardCount ?? 8);
    const id = `${space}.${n}`;
    let s = this.shards.get(id);
    if (!s) {
      s = new ShardCommitter(this, space, n);
      this.shards.set(id, s);
    }
    return s;
  }

  claim(project: string, key: string, claim: Claim): Promise<ClaimResult> {
    return this.claimMany(project, [{ key, claim }]).then((r) => r[0]!);
  }

  /**
   * Claims many keys at once (a batch's): one promise per batch rather than per key,
   * which keeps allocation, and so garbage collection, off the per-log path.
   */
  claimMany(project: string, items: { key: string; claim: Claim }[]): Promise<ClaimResult[]> {
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const results = new Results<ClaimResult>(items.length, resolve, reject);
      items.forEach(({ key, claim }, index) => this.shard(project, key).enqueue({ kind: "claim", key, claim, results, index }));
    });
  }

  /** Who holds each key now (null: nobody), without claiming: read in order with the shard's commits. */
  peekMany(space: string, keys: string[]): Promise<(Claim | null)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const results = new Results<Claim | null>(keys.length, resolve, reject);
      keys.forEach((key, index) => this.shard(space, key).enqueue({ kind: "peek", key, results, index }));
    });
  }

  /** Takes over a key only if `expected` still holds it (an orphaned claim). */
  replace(project: string, key: string, expected: string, claim: Claim): Promise<boolean> {
    return new Promise<boolean[]>((resolve, reject) =>
      this.shard(project, key).enqueue({ kind: "replace", key, expected, claim, results: new Results(1, resolve, reject), index: 0 }),
    ).then((r) => r[0]!);
  }

  /** Gives a key back when its log could not be stored, so a retry can take it. */
  release(project: string, key: string, logId: string): Promise<boolean> {
    return new Promise<boolean[]>((resolve, reject) =>
      this.shard(project, key).enqueue({ kind: "release", key, logId, results: new Results(1, resolve, reject), index: 0 }),
    ).then((r) => r[0]!);
  }

  /**
   * Remembers that these logs (claimed at `claimedAt`) are stored, so a retry is told
   * "duplicate" at once. One hash per claim hour, kept a day: one command per batch.
   */
  async markStored(logIds: string[], claimedAt: number): Promise<void> {
    if (logIds.length === 0) return;
    const key = this.storedKey(claimedAt);
    const fields = new Array<string>(logIds.length * 2);
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

  encode(lines: readonly string[]): Uint8Array {
    return this.encoder.encode(lines.join("\n"));
  }
}

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
